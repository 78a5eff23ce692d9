//go:build unix

package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seedhq/jsonrpc"
)

// A unix socket listener never replaces a file, and its socket file gets
// the permissions of ListenSocketMode (0600 without it).
func ExampleListenSocketMode() {
	dir, _ := os.MkdirTemp("", "jrpc")
	defer os.RemoveAll(dir)
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux()}
	defer srv.Shutdown(context.Background())

	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("keep me"), 0o644)
	_, err := srv.Listen("unix://" + notes)
	kept, _ := os.ReadFile(notes)
	fmt.Println(errors.Is(err, fs.ErrExist), string(kept))

	sock := filepath.Join(dir, "rpc.sock")
	if _, err := srv.Listen("unix://"+sock, jsonrpc.ListenSocketMode(0o660)); err != nil {
		fmt.Println(err)
		return
	}
	fi, _ := os.Stat(sock)
	fmt.Println(fi.Mode().Perm())
	// Output:
	// true keep me
	// -rw-rw----
}
