//go:build race

package connrt

const raceEnabled = true
