package interop

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/interop/ethapi"
	"github.com/seedhq/jsonrpc/openrpc/gen"
)

// gethEth is an "eth" service served by go-ethereum's own rpc server, with
// go-ethereum's argument and result types (so its params checks and its
// JSON are geth's).
type gethEth struct{}

//lint:ignore ST1003 go-ethereum names the method eth_chainId from the Go name
func (gethEth) ChainId() *hexutil.Big { return (*hexutil.Big)(big.NewInt(1337)) }

func (gethEth) BlockNumber() hexutil.Uint64 { return 0x2a }

func (gethEth) GetBalance(addr common.Address, block *rpc.BlockNumberOrHash) (*hexutil.Big, error) {
	n := new(big.Int).SetBytes(addr[18:])
	if block != nil {
		if num, ok := block.Number(); ok && num >= 0 {
			n.Add(n, big.NewInt(int64(num)))
		}
	}
	return (*hexutil.Big)(n), nil
}

func (gethEth) GetBlockByNumber(number rpc.BlockNumber, full bool) (map[string]any, error) {
	if number > 100 {
		return nil, nil // not found: null
	}
	return map[string]any{
		"number":          hexutil.Uint64(number),
		"hash":            common.BigToHash(big.NewInt(int64(number) + 1)),
		"parentHash":      common.BigToHash(big.NewInt(int64(number))),
		"gasLimit":        hexutil.Uint64(30_000_000),
		"extraData":       hexutil.Bytes{0xca, 0xfe},
		"transactions":    []common.Hash{common.HexToHash("0x01")},
		"uncles":          []common.Hash{},
		"totalDifficulty": hexutil.Uint64(0), // a member the document no longer has: ignored
	}, nil
}

// TestGeneratedClientCallsGeth calls go-ethereum's rpc server over HTTP
// and WebSocket through the client jrpc gen made from execution-apis
// (package ethapi): typed results equal the raw ones, absent optional
// params are left out (geth refuses null for them), a bad param is a
// *jsonrpc.Error.
func TestGeneratedClientCallsGeth(t *testing.T) {
	srv := rpc.NewServer()
	defer srv.Stop()
	if err := srv.RegisterName("eth", gethEth{}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ws := httptest.NewServer(srv.WebsocketHandler([]string{"*"}))
	defer ws.Close()
	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Second)
	defer cancel()
	for name, url := range map[string]string{"http": hs.URL, "websocket": "ws" + strings.TrimPrefix(ws.URL, "http")} {
		t.Run(name, func(t *testing.T) {
			c, err := jsonrpc.Dial(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkEthAPI(t, ctx, c)
		})
	}
}

// raw calls method and returns its result as sent.
func raw(t *testing.T, ctx context.Context, c jsonrpc.Client, method string, params any) string {
	t.Helper()
	var r json.RawMessage
	if err := c.Call(ctx, method, params, &r); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return string(r)
}

func checkEthAPI(t *testing.T, ctx context.Context, c jsonrpc.Client) {
	eth := ethapi.NewClient(c)
	chain, err := eth.EthChainID(ctx)
	if err != nil || `"`+string(chain)+`"` != raw(t, ctx, c, "eth_chainId", nil) || chain != "0x539" {
		t.Fatalf("eth_chainId: %q, %v", chain, err)
	}
	if num, err := eth.EthBlockNumber(ctx); err != nil || num != "0x2a" {
		t.Fatalf("eth_blockNumber: %q, %v", num, err)
	}
	addr := ethapi.Address("0x00000000000000000000000000000000000001f4")
	bal, err := eth.EthGetBalance(ctx, addr, nil) // sent as [addr]
	if err != nil || bal != "0x1f4" || `"`+string(bal)+`"` != raw(t, ctx, c, "eth_getBalance", []any{addr}) {
		t.Fatalf("eth_getBalance: %q, %v", bal, err)
	}
	at := ethapi.BlockNumberOrTagOrHash("0x2")
	if bal, err = eth.EthGetBalance(ctx, addr, &at); err != nil || bal != "0x1f6" {
		t.Fatalf("eth_getBalance at 0x2: %q, %v", bal, err)
	}
	checkBlock(t, ctx, c, eth)
	_, err = eth.EthGetBalance(ctx, "0xnot-an-address", nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("a bad address: %v, want a -32602 *jsonrpc.Error", err)
	}
}

// checkBlock compares a typed block with the raw one (geth adds a member
// the document does not know: ignored), and a missing block is nil.
func checkBlock(t *testing.T, ctx context.Context, c jsonrpc.Client, eth *ethapi.Client) {
	block, err := eth.EthGetBlockByNumber(ctx, "0x7", false)
	if err != nil || block == nil {
		t.Fatalf("eth_getBlockByNumber: %v, %v", block, err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw(t, ctx, c, "eth_getBlockByNumber", []any{"0x7", false})), &want); err != nil {
		t.Fatal(err)
	}
	quoted := func(s string) string { return `"` + s + `"` }
	hashes, err := block.Transactions.AsTransactionHashes()
	if err != nil || quoted(string(block.Number)) != string(want["number"]) || quoted(string(block.Hash)) != string(want["hash"]) ||
		quoted(string(block.ExtraData)) != string(want["extraData"]) || len(hashes) != 1 || hashes[0] != "0x0000000000000000000000000000000000000000000000000000000000000001" {
		t.Fatalf("block %+v (%v), raw %s", block, err, want)
	}
	if missing, err := eth.EthGetBlockByNumber(ctx, "0x1000", false); err != nil || missing != nil {
		t.Fatalf("a missing block: %v, %v; want nil, nil", missing, err)
	}
}

// TestGeneratedEthAPIUpToDate checks that package ethapi is what jrpc gen
// makes from the shared corpus's execution-apis document today.
func TestGeneratedEthAPIUpToDate(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "shared", "codegen-corpus", "execution-apis", "refs-openrpc.json"))
	if err != nil {
		t.Skipf("the shared codegen corpus is not beside the repository: %v", err)
	}
	want, err := gen.Go(doc, gen.Options{Package: "ethapi"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("ethapi", "ethapi.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("ethapi/ethapi.go is stale: run go generate ./ethapi in interop")
	}
}
