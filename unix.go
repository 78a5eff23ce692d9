package jsonrpc

import "io/fs"

// DefaultSocketMode is the permission of a unix socket file that Listen
// creates: only its owner may connect. See ListenSocketMode.
const DefaultSocketMode fs.FileMode = 0o600

// ListenSocketMode sets the permission bits of the socket file a unix://
// listener creates (default DefaultSocketMode, 0600); the umask does not
// apply. Abstract sockets (unix://@name) have no file and ignore it.
func ListenSocketMode(mode fs.FileMode) ListenOption {
	return func(c *listenConfig) { c.socketMode = mode.Perm() }
}
