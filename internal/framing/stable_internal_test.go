package framing

import (
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// The strings decoded from a large message share its read buffer, which is
// never recycled: kept after the message was given back, they stay intact
// while later large and small messages are read, given back and reused.
func TestLargeMessageStringsKept(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	s := New(server, Line, 8<<20, 30*time.Second)
	defer s.Close()
	type params struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	msg := func(i, n int) string {
		return `{"a":` + string(rune('0'+i%10)) + `,"b":"` + strings.Repeat(string(rune('a'+i%26)), n) + `"}` + "\n"
	}
	sizes := []int{300 << 10, 10, 200 << 10, 20 << 10, 1 << 20, 5, 70 << 10, 200 << 10, 30 << 10, 300 << 10}
	go func() {
		for round := range 3 {
			for i, n := range sizes {
				client.Write([]byte(msg(round*len(sizes)+i, n)))
			}
		}
	}()
	type kept struct {
		p    params
		want string
	}
	var all []kept
	for i := range 3 * len(sizes) {
		m, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var p params
		if err := codec.Unmarshal(m, &p); err != nil {
			t.Fatal(err)
		}
		n := sizes[i%len(sizes)]
		shared := p.B != "" && unsafe.StringData(p.B) == &m[12]
		// A large message is always stable; a smaller one only when it
		// was read into a buffer a large one made stable.
		if stable := wire.Stable(m); shared != stable || (len(m) >= LargeMessage && !stable) {
			t.Fatalf("message %d of %d bytes: string shared %v, stable %v", i, len(m), shared, wire.Stable(m))
		}
		s.GiveBack(m) // the strings kept below must not mind
		all = append(all, kept{p, strings.Repeat(string(rune('a'+i%26)), n)})
		for j, k := range all {
			if k.p.B != k.want || k.p.A != j%10 {
				t.Fatalf("after message %d: the string kept from message %d changed", i, j)
			}
		}
	}
}
