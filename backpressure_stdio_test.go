package jsonrpc_test

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A parent that asks its stdio server for 200 MiB of replies and then
// stops reading is waited for: the server stops reading its input (no
// write timeout on stdio by default), does not exit, and once the parent
// reads again every reply arrives; the server then exits 0 at the end of
// its input.
func TestStdioSlowParentGetsEveryReply(t *testing.T) {
	const size = 1 << 20
	calls := 200
	if jsonrpc.RaceEnabled {
		calls = 24 // the race detector slows a 200 MiB transfer to minutes
	}
	stderr := new(syncBuffer)
	cmd, pc := startHelper(t, "demo", stderr)
	go func() {
		for i := range calls {
			msg := `{"jsonrpc":"2.0","method":"big","params":{"n":` + strconv.Itoa(size) + `},"id":` + strconv.Itoa(i) + "}\n"
			if _, err := io.WriteString(pc, msg); err != nil {
				return
			}
		}
	}()
	time.Sleep(3 * time.Second) // not reading
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the server exited while its parent did not read: %v\n%s", err, stderr)
	default:
	}
	pc.r.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReaderSize(pc, 64<<10)
	want := strings.Repeat("x", size) + "\"}\n"
	for i := range calls {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reply %d: %v\n%s", i, err, stderr)
		}
		if _, body, ok := strings.Cut(line, `,"result":"`); !ok || body != want {
			t.Fatalf("reply %d: %.80q", i, line)
		}
	}
	pc.w.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit at the end of its input")
	}
}
