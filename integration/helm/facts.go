package main

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/server"
)

// facts are what the manifests must agree with, read from the game itself.
type facts struct {
	// tableGrace and shutdownGrace are cmd/crashgame/serve.go's bounds of a
	// stop after the drain: the tables' hand-over, then the queue's and the
	// HTTP server's drains (each up to shutdownGrace).
	tableGrace, shutdownGrace time.Duration
	// metricsRoute is the pattern serve registers on metrics_listen.
	metricsRoute string
	// status answers a GET of path on the game's public handler
	// (internal/server.New, as serve wires it), with the replica ready or not.
	status func(path string, ready bool) int
}

// readFacts reads cmd/crashgame/serve.go under repo.
func readFacts(repo string) (*facts, error) {
	path := filepath.Join(repo, "cmd", "crashgame", "serve.go")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("read the game's stop sequence: %w", err)
	}
	fc := &facts{status: status}
	consts := map[string]*time.Duration{"tableGrace": &fc.tableGrace, "shutdownGrace": &fc.shutdownGrace}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if dst, ok := consts[id.Name]; ok && i < len(n.Values) {
					if d, ok := duration(n.Values[i]); ok {
						*dst = d
						delete(consts, id.Name)
					}
				}
			}
		case *ast.CallExpr:
			// mux.Handle("GET /metrics", ...) on the metrics listener.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Handle" && len(n.Args) == 2 {
				if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasSuffix(s, "/metrics") {
						fc.metricsRoute = s
					}
				}
			}
		}
		return true
	})
	for name := range consts {
		return nil, fmt.Errorf("%s: no constant %s of the form N * time.Unit: the check of terminationGracePeriodSeconds needs it", path, name)
	}
	if fc.metricsRoute == "" {
		return nil, fmt.Errorf("%s: no Handle(\"GET /metrics\", ...): the ServiceMonitor's path needs it", path)
	}
	return fc, nil
}

// duration evaluates N * time.Unit.
func duration(e ast.Expr) (time.Duration, bool) {
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.MUL {
		return 0, false
	}
	lit, ok := b.X.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, false
	}
	n, err := strconv.ParseInt(lit.Value, 0, 64)
	if err != nil {
		return 0, false
	}
	sel, ok := b.Y.(*ast.SelectorExpr)
	if !ok {
		return 0, false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "time" {
		return 0, false
	}
	unit := map[string]time.Duration{"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute}[sel.Sel.Name]
	if unit == 0 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// status asks the game's own root handler.
func status(path string, ready bool) int {
	h := server.New(server.Config{
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Documents: http.NotFoundHandler(),
		Ready: func(context.Context) error {
			if ready {
				return nil
			}
			return errors.New("PostgreSQL does not answer")
		},
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}
