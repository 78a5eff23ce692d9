package nats_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/seedhq/jsonrpc"
	_ "github.com/seedhq/jsonrpc/nats" // registers nats://
)

// Two instances serve the subject "math" through one NATS server; a client
// calls whichever the broker picks.
func Example() {
	ns, _ := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	go ns.Start()
	defer ns.Shutdown()
	ns.ReadyForConnections(10 * time.Second)
	url := strings.TrimSuffix(ns.ClientURL(), "/") + "/math"

	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "add", func(ctx context.Context, p []int) (int, error) { return p[0] + p[1], nil })
	for range 2 {
		srv := &jsonrpc.Server{Handler: mux}
		if _, err := srv.Listen(url); err != nil {
			fmt.Println(err)
			return
		}
		defer srv.Shutdown(context.Background()) // drains: no call is lost
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	var sum int
	err = c.Call(ctx, "add", []int{2, 3}, &sum)
	fmt.Println(sum, err)
	// Output: 5 <nil>
}
