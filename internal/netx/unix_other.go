//go:build !unix

package netx

import "io/fs"

func presetSocketMode(uintptr, fs.FileMode) {}
