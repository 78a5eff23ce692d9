package jsonrpc_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/seedhq/jsonrpc"
)

// A handler reports progress against the token its caller sent; a client
// with WithProgress receives the reports, in order, before the result.
// Under ConventionMCP the token is params._meta.progressToken.
func ExampleReportProgress() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "count", func(ctx context.Context, p struct {
		N    int            `json:"n"`
		Meta map[string]any `json:"_meta"`
	}) (string, error) {
		for i := 1; i <= p.N; i++ {
			jsonrpc.ReportProgress(ctx, float64(i), float64(p.N), "item "+strconv.Itoa(i))
		}
		return "counted", nil
	})
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	ctx := context.Background()
	c, err := jsonrpc.Dial(ctx, l.URL,
		jsonrpc.WithConvention(jsonrpc.ConventionMCP), // a Call whose ctx ends sends notifications/cancelled
		jsonrpc.WithProgress(func(_ context.Context, p jsonrpc.Progress) {
			fmt.Printf("%s: %v/%v %s\n", p.Token, p.Progress, p.Total, p.Message)
		}))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var res string
	err = c.Call(ctx, "count", map[string]any{"n": 3, "_meta": map[string]any{"progressToken": "job-1"}}, &res)
	fmt.Println(res, err)
	// Output:
	// "job-1": 1/3 item 1
	// "job-1": 2/3 item 2
	// "job-1": 3/3 item 3
	// counted <nil>
}
