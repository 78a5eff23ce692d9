//go:build ignore

// params prints each function declared in the given Go files that takes more
// than -over parameters (the receiver not counted, a variadic one counted once),
// one per line as "N package function file:line:column", the format of gocyclo's
// report, so that .ci/complexity treats both alike.
//
//	go run .ci/params.go -over 6 FILE...
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
)

func main() {
	over := flag.Int("over", 6, "report functions with more parameters than this")
	flag.Parse()
	fset := token.NewFileSet()
	for _, path := range flag.Args() {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fn.Type.Params.NumFields(); n > *over {
				fmt.Printf("%d %s %s %s\n", n, f.Name.Name, funcName(fn), fset.Position(fn.Pos()))
			}
		}
	}
}

// funcName names fn as gocyclo does: "(*T).Method", "(T).Method" or "Func".
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv != nil && fn.Recv.NumFields() > 0 {
		return fmt.Sprintf("(%s).%s", recvString(fn.Recv.List[0].Type), fn.Name.Name)
	}
	return fn.Name.Name
}

func recvString(recv ast.Expr) string {
	switch t := recv.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + recvString(t.X)
	case *ast.IndexExpr:
		return recvString(t.X)
	case *ast.IndexListExpr:
		return recvString(t.X)
	}
	return "BADRECV"
}
