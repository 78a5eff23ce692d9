module github.com/seedhq/jsonrpc

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/go-json-experiment/json v1.27.2
	github.com/google/jsonschema-go v0.4.3
	go.uber.org/goleak v1.3.0
	golang.org/x/time v0.16.0
)
