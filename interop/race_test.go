//go:build race

package interop

// raceEnabled tells the tests to build helper programs with -race too.
const raceEnabled = true
