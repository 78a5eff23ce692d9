module github.com/seedhq/jsonrpc/interop

go 1.26.0

require (
	github.com/creachadair/jrpc2 v1.3.6
	github.com/seedhq/jsonrpc v0.0.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/creachadair/mds v0.31.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace github.com/seedhq/jsonrpc => ../
