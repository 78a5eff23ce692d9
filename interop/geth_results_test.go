package interop

import (
	"encoding/json"
	"math/big"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
)

// ethChain is a geth-like "eth" service on go-ethereum's rpc.Server: blocks
// are go-ethereum's own headers, encoded as geth encodes them (with
// baseFeePerGas, withdrawalsRoot, blobGasUsed… beside the usual members).
type ethChain struct{ headers []*types.Header }

func newEthChain(n int) *ethChain {
	c := &ethChain{}
	parent := common.Hash{}
	for i := range n {
		h := &types.Header{
			ParentHash: parent,
			Number:     big.NewInt(int64(i)),
			GasLimit:   30_000_000,
			Time:       uint64(1_700_000_000 + 12*i),
			BaseFee:    big.NewInt(1_000_000_000),
			Difficulty: new(big.Int),
		}
		c.headers = append(c.headers, h)
		parent = h.Hash()
	}
	return c
}

// GetBlockByNumber serves eth_getBlockByNumber: the header's members, its
// hash, and the body's (empty) lists, as geth answers.
func (c *ethChain) GetBlockByNumber(number hexutil.Uint64, fullTx bool) (map[string]any, error) {
	if int(number) >= len(c.headers) {
		return nil, nil
	}
	h := c.headers[number]
	enc, err := h.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var block map[string]any
	if err := json.Unmarshal(enc, &block); err != nil {
		return nil, err
	}
	block["transactions"] = []any{}
	block["uncles"] = []any{}
	block["size"] = hexutil.Uint64(540)
	return block, nil
}

type blockHead struct {
	Number     string `json:"number"`
	Hash       string `json:"hash"`
	ParentHash string `json:"parentHash"`
}

// Issue 26: eth_getBlockByNumber into a struct of three of a block's
// members, through Call and a Batch element, against go-ethereum's rpc
// server over HTTP, WebSocket and IPC (a unix socket).
func TestGethBlockIntoSmallStruct(t *testing.T) {
	chain := newEthChain(3)
	gs := rpc.NewServer()
	if err := gs.RegisterName("eth", chain); err != nil {
		t.Fatal(err)
	}
	defer gs.Stop()
	hs := httptest.NewServer(gs)
	defer hs.Close()
	ws := httptest.NewServer(gs.WebsocketHandler([]string{"*"}))
	defer ws.Close()
	sock := filepath.Join(t.TempDir(), "geth.ipc")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go gs.ServeListener(l)
	defer l.Close()

	ctx := testContext(t)
	for name, url := range map[string]string{
		"http":      hs.URL,
		"websocket": "ws" + strings.TrimPrefix(ws.URL, "http"),
		"ipc":       "unix://" + sock,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := jsonrpc.Dial(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var b blockHead
			if err := c.Call(ctx, "eth_getBlockByNumber", []any{"0x2", false}, &b); err != nil {
				t.Fatal(err)
			}
			if b.Number != "0x2" || b.Hash != chain.headers[2].Hash().Hex() || b.ParentHash != chain.headers[1].Hash().Hex() {
				t.Fatalf("block 2: %+v", b)
			}
			var batch jsonrpc.Batch
			var b0, b1 blockHead
			c0 := batch.Call("eth_getBlockByNumber", []any{"0x0", false}, &b0)
			c1 := batch.Call("eth_getBlockByNumber", []any{"0x1", true}, &b1)
			if err := c.Batch(ctx, &batch); err != nil || c0.Err != nil || c1.Err != nil {
				t.Fatalf("batch: %v, %v, %v", err, c0.Err, c1.Err)
			}
			if b0.Hash != b1.ParentHash || b1.Number != "0x1" {
				t.Fatalf("batch blocks: %+v %+v", b0, b1)
			}

			// Strict decoding names the first member geth adds, by its JSON Pointer.
			strict, err := jsonrpc.Dial(ctx, url, jsonrpc.WithStrictResults())
			if err != nil {
				t.Fatal(err)
			}
			defer strict.Close()
			err = strict.Call(ctx, "eth_getBlockByNumber", []any{"0x2", false}, &b)
			if err == nil || !strings.Contains(err.Error(), "at /baseFeePerGas: unknown member") {
				t.Fatalf("strict: %v", err)
			}
		})
	}
}
