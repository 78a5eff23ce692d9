//go:build !linux

package httpx

import "net"

// unlisten cannot end listening here without a close, which resets the
// connections still queued: the caller closes the listener.
func unlisten(net.Listener) ([]net.Conn, bool) { return nil, false }
