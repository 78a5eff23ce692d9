package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/spf13/cobra"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "discover URL",
		Short: "Print the server's OpenRPC document (rpc.discover)",
		Args:  targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, _, err := newTarget(args)
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd.Context())
			defer cancel()
			doc, err := fetchDiscover(ctx, t)
			if err != nil {
				return err
			}
			outputFor(os.Stdout).print(os.Stdout, doc)
			return nil
		},
	})
}

// fetchDiscover calls rpc.discover.
func fetchDiscover(ctx context.Context, t *target) (json.RawMessage, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var doc json.RawMessage
	if err := c.Call(ctx, "rpc.discover", nil, &doc); err != nil {
		return nil, callErr(t, err)
	}
	return doc, nil
}

func checkParams(ctx context.Context, t *target, method string, params json.RawMessage) error {
	return usageErrorf("--check is not available yet")
}
