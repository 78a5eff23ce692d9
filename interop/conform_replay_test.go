package interop

import (
	"crypto/rand"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// replayEth serves the methods of the fixtures in testdata/replay with
// go-ethereum's own rpc.Server.
type replayEth struct{}

func (replayEth) ChainId() hexutil.Uint64     { return 1337 }
func (replayEth) BlockNumber() hexutil.Uint64 { return 0x2a }

func (replayEth) GetBalance(addr common.Address, block string) *hexutil.Big {
	return (*hexutil.Big)(addr.Big())
}

// replayBlock is a block whose hash and timestamp change from run to run
// (what speconly fixtures are for).
type replayBlock struct {
	Number    hexutil.Uint64 `json:"number"`
	Hash      common.Hash    `json:"hash"`
	Timestamp hexutil.Uint64 `json:"timestamp"`
}

func (replayEth) GetBlockByNumber(number string, full bool) *replayBlock {
	if number != "latest" && number != "0x2a" {
		return nil // null: no such block
	}
	b := &replayBlock{Number: 0x2a, Timestamp: hexutil.Uint64(time.Now().UnixNano())}
	rand.Read(b.Hash[:])
	return b
}

// startReplayGeth serves replayEth over HTTP and WebSocket.
func startReplayGeth(t *testing.T) (httpURL, wsURL string) {
	srv := rpc.NewServer()
	if err := srv.RegisterName("eth", replayEth{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ws := httptest.NewServer(srv.WebsocketHandler([]string{"*"}))
	t.Cleanup(ws.Close)
	return hs.URL, "ws" + strings.TrimPrefix(ws.URL, "http")
}

// TestConformReplay replays execution-apis fixtures (our own, in
// testdata/replay) with jrpc conform --replay against go-ethereum's
// rpc.Server: the good ones pass (results compared exactly, error messages
// aside, a speconly result against its schema), over HTTP and WebSocket;
// the bad ones fail with exit 1, each saying why.
func TestConformReplay(t *testing.T) {
	httpURL, wsURL := startReplayGeth(t)
	dir := filepath.Join("testdata", "replay")
	schema := filepath.Join(dir, "openrpc.json")
	good := []string{"replay/eth_blockNumber/twice", "replay/eth_chainId/chain-id", "replay/eth_getBalance/missing-argument", "replay/eth_getBlockByNumber/latest"}
	for _, u := range []string{httpURL, wsURL} {
		t.Run("good "+u[:strings.Index(u, ":")], func(t *testing.T) {
			code, rep, out := runConform(t, "conform", u, "--replay", filepath.Join(dir, "good"), "--schema", schema)
			var passed []string
			for _, c := range rep.Checks {
				if c.Status == "PASS" {
					passed = append(passed, c.Name)
				}
			}
			if code != 0 || !slices.Equal(passed, good) || len(rep.Checks) != len(good) {
				t.Fatalf("exit %d, passed %v; want exit 0 and %v\n%s", code, passed, good, out)
			}
		})
	}
	t.Run("one file", func(t *testing.T) {
		code, rep, out := runConform(t, "conform", httpURL, "--replay", filepath.Join(dir, "good", "eth_chainId", "chain-id.io"))
		if code != 0 || len(rep.Checks) != 1 || rep.Checks[0].Name != "replay/chain-id" {
			t.Fatalf("exit %d, %+v\n%s", code, rep.Checks, out)
		}
	})
	t.Run("bad", func(t *testing.T) {
		code, rep, out := runConform(t, "conform", httpURL, "--replay", filepath.Join(dir, "bad"), "--schema", schema)
		want := map[string]string{
			"replay/eth_chainId/wrong-chain":            `result: got "0x539", want "0x1"`,
			"replay/eth_getBlockByNumber/unknown-block": "the result does not fit the schema of eth_getBlockByNumber",
		}
		if code != 1 || len(rep.Checks) != len(want) {
			t.Fatalf("exit %d, %d checks; want exit 1 and %d\n%s", code, len(rep.Checks), len(want), out)
		}
		for _, c := range rep.Checks {
			if c.Status != "FAIL" || c.Level != "MUST" || !strings.Contains(c.Detail, want[c.Name]) {
				t.Errorf("%s: %s %s %q; want a MUST failure saying %q", c.Name, c.Status, c.Level, c.Detail, want[c.Name])
			}
		}
		for _, line := range []string{"replay: 1 check fails (1 MUST) because responses differ from the recorded ones", "replay: 1 check fails (1 MUST) because results do not fit the method's schema"} {
			if !strings.Contains(out, line) {
				t.Errorf("no line %q in\n%s", line, out)
			}
		}
	})
	t.Run("speconly without a schema", func(t *testing.T) {
		// go-ethereum has no rpc.discover: the schema cannot be found.
		code, rep, out := runConform(t, "conform", httpURL, "--replay", filepath.Join(dir, "good", "eth_getBlockByNumber"))
		if code != 1 || len(rep.Checks) != 1 || !strings.Contains(rep.Checks[0].Detail, "pass --schema openrpc.json") {
			t.Fatalf("exit %d, %+v\n%s", code, rep.Checks, out)
		}
	})
}
