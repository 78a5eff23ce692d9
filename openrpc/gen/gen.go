// Package gen generates typed clients and servers from OpenRPC documents:
// Go (a Client, a Service interface and Register, over package jsonrpc)
// and TypeScript (a Client over fetch or WebSocket, with no runtime
// dependency). It is the library behind `jrpc gen go` and `jrpc gen ts`.
//
// The generated code follows the document: types for its schemas (named
// from components/schemas, else from a schema's title or where it is
// used), one method per OpenRPC method, params by position or by name as
// the method's paramStructure says, and results decoded leniently. The
// mapping from JSON Schema to Go and TypeScript types is documented in
// docs/codegen.md. The output depends only on the document: the same
// document gives the same bytes.
package gen

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Options configures a generation.
type Options struct {
	// Package is the Go package name; empty derives it from info.title
	// (see PackageName).
	Package string
	// Warn, when set, is told about every choice the generator made that
	// the reader should know: names that collided and were renamed,
	// references it could not resolve.
	Warn func(msg string)
}

// Go generates one gofmt-formatted Go file from an OpenRPC document.
func Go(doc []byte, opts Options) ([]byte, error) {
	m, names, err := load(doc, opts)
	if err != nil {
		return nil, err
	}
	pkg := opts.Package
	if pkg == "" {
		pkg = PackageName(m.title)
	} else if !validPackage(pkg) {
		return nil, fmt.Errorf("gen: %q is not a usable Go package name", pkg)
	}
	return renderGo(m, pkg, names, warner(opts))
}

// TypeScript generates one TypeScript module from an OpenRPC document.
func TypeScript(doc []byte, opts Options) ([]byte, error) {
	m, _, err := load(doc, opts)
	if err != nil {
		return nil, err
	}
	return renderTS(m), nil
}

func warner(opts Options) func(string) {
	if opts.Warn != nil {
		return opts.Warn
	}
	return func(string) {}
}

func load(doc []byte, opts Options) (*model, *namer, error) {
	root, err := parseJSON(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("gen: the document is not JSON: %w", err)
	}
	if root.kind != '{' || root.str("openrpc") == "" {
		return nil, nil, errors.New("gen: not an OpenRPC document (no \"openrpc\" member)")
	}
	b, m, err := build(root, warner(opts))
	if err != nil {
		return nil, nil, fmt.Errorf("gen: %w", err)
	}
	return m, b.names, nil
}

// PackageName derives a Go package name from a document's title: its
// letters and digits, lower-cased ("Ethereum JSON-RPC" → ethereumjsonrpc);
// "api" when nothing is left; with "api" added when the name would clash
// with a keyword, a predeclared name or a package the code imports.
func PackageName(title string) string {
	var b strings.Builder
	for _, w := range words(title) {
		b.WriteString(strings.ToLower(w))
	}
	n := b.String()
	switch {
	case n == "":
		return "api"
	case unicode.IsDigit(rune(n[0])):
		return "api" + n
	case goKeywords[n] || goPredeclared[n] || importedNames[n]:
		return n + "api"
	}
	return n
}

var importedNames = setOf("jsonrpc", "json", "jsonv2", "context", "fmt", "main", "errors")

func validPackage(s string) bool {
	if s == "" || goKeywords[s] || importedNames[s] || s == "_" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c < 128 && unicode.IsLetter(c) || i > 0 && unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}
