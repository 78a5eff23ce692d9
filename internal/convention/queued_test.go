package convention

import (
	"errors"
	"math"
	"testing"
)

func TestQueued(t *testing.T) {
	var q Queued
	if q.Cancel("1") || q.Cancelled("1") {
		t.Fatal("an id not queued was cancelled")
	}
	q.Add("1")
	q.Add("1") // two requests with the same id
	q.Add("2")
	if !q.Cancel("1") {
		t.Fatal("Cancel of a queued id = false")
	}
	if q.Cancel("1") {
		t.Fatal("second Cancel = true")
	}
	if !q.Cancelled("1") || q.Cancelled("2") {
		t.Fatalf("Cancelled: 1=%v 2=%v", q.Cancelled("1"), q.Cancelled("2"))
	}
	q.Done("1")
	if !q.Cancelled("1") {
		t.Fatal("the second request with id 1 lost its cancel")
	}
	q.Done("1")
	if q.Cancelled("1") {
		t.Fatal("id 1 still queued after both were served")
	}
	q.Done("2")
	if q != nil {
		t.Fatalf("empty set = %v, want nil", q)
	}
	q.Done("3") // unknown: no effect
}

func TestProgress(t *testing.T) {
	var sent []string
	send := func(p []byte) error { sent = append(sent, string(p)); return nil }
	calls := 0
	tokenOf := func(params []byte, cv Convention) []byte {
		calls++
		return append([]byte(nil), TokenOf(params, cv)...)
	}
	p := &Progress{Conv: LSP, Params: []byte(`{"workDoneToken":"w"}`), TokenOf: tokenOf}
	if err := p.Report(1, 4, "go", send); err != nil {
		t.Fatal(err)
	}
	if err := p.Report(1, 4, "", send); !errors.Is(err, ErrNotIncreasing) {
		t.Fatalf("equal value: err = %v", err)
	}
	if err := p.Report(math.NaN(), 4, "", send); !errors.Is(err, ErrNotIncreasing) {
		t.Fatalf("NaN: err = %v", err)
	}
	if err := p.Report(2, 4, "", send); err != nil {
		t.Fatal(err)
	}
	p.End(false, send)
	if err := p.Report(3, 4, "", send); err != nil || len(sent) != 3 {
		t.Fatalf("after End: err = %v, sent %d", err, len(sent))
	}
	want := []string{
		string(AppendLSPProgress([]byte(`"w"`), 1, 4, "go", true)),
		string(AppendLSPProgress([]byte(`"w"`), 2, 4, "", false)),
		string(LSPEnd([]byte(`"w"`))),
	}
	for i := range want {
		if sent[i] != want[i] {
			t.Errorf("sent[%d] = %s, want %s", i, sent[i], want[i])
		}
	}
	if calls != 1 {
		t.Errorf("TokenOf called %d times, want 1", calls)
	}

	// Without a token nothing is sent, but the values must still increase;
	// a cancelled LSP request gets no "end".
	sent = nil
	p = &Progress{Conv: MCP, Params: []byte(`{}`), TokenOf: tokenOf}
	if err := p.Report(5, 0, "", send); err != nil {
		t.Fatal(err)
	}
	if err := p.Report(4, 0, "", send); !errors.Is(err, ErrNotIncreasing) {
		t.Fatalf("decreasing without a token: err = %v", err)
	}
	p = &Progress{Conv: LSP, Params: []byte(`{"workDoneToken":1}`), TokenOf: tokenOf}
	_ = p.Report(1, 0, "", send)
	p.End(true, send)
	if len(sent) != 1 {
		t.Fatalf("sent %d messages, want the one report and no end: %q", len(sent), sent)
	}
}
