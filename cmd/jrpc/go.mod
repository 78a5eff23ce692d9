module github.com/seedhq/jsonrpc/cmd/jrpc

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/creack/pty v1.1.24
	github.com/go-json-experiment/json v1.27.2
	github.com/peterh/liner v1.2.3
	github.com/seedhq/jsonrpc v0.0.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	golang.org/x/sys v0.48.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
)

replace github.com/seedhq/jsonrpc => ../..
