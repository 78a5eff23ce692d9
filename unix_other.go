//go:build !unix

package jsonrpc

import "io/fs"

func presetSocketMode(uintptr, fs.FileMode) {}
