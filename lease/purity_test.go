package lease

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are the only packages the core may use: no os, io, net,
// sync, log or any package that reaches the outside world. flatjson (the
// fast path of the request bodies) is held to the same rules below.
var allowedImports = map[string]bool{
	"chunklease/internal/flatjson": true, "bytes": true,
	"cmp": true, "encoding/json": true, "errors": true, "fmt": true, "math": true,
	"math/bits": true, "math/rand/v2": true, "slices": true, "sort": true,
	"strconv": true, "strings": true, "time": true,
}

// forbiddenCalls are package-level functions that read a clock, sleep,
// start timers or draw from global randomness. The core may use the
// time.Duration type and a caller's *rand.Rand, nothing else from them.
var forbiddenCalls = map[string]map[string]bool{
	"time": {"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true},
	"rand": {"Int": true, "IntN": true, "Int64": true, "Int64N": true, "Int32": true, "Int32N": true,
		"Uint32": true, "Uint64": true, "Uint64N": true, "UintN": true, "Float32": true, "Float64": true,
		"Perm": true, "Shuffle": true, "N": true, "ExpFloat64": true, "NormFloat64": true, "Uint": true},
}

// TestCoreIsPure enforces the package's central promise: a pure state
// machine with no clock reads, I/O, goroutines or global randomness.
func TestCoreIsPure(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	shared, _ := filepath.Glob("../internal/flatjson/*.go")
	if len(shared) == 0 {
		t.Fatal("no source of internal/flatjson found: the glob is wrong")
	}
	files = append(files, shared...)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		for _, p := range impurities(t, name, nil) {
			t.Error(p)
		}
	}
	if checked < 5 {
		t.Fatalf("only %d source files checked; the glob is wrong", checked)
	}
}

// TestPurityCheckBites is the negative control: a file doing each
// forbidden thing must be reported once per thing.
func TestPurityCheckBites(t *testing.T) {
	src := `package lease
import ("os"; "time"; "math/rand/v2")
func bad() {
	_ = time.Now()
	_ = rand.IntN(3)
	go func() {}()
	c := make(chan int)
	_ = c
	_ = os.Args
}`
	if got := impurities(t, "bad.go", src); len(got) != 5 {
		t.Fatalf("the purity check found %d problems in a file with 5: %q", len(got), got)
	}
}

// impurities parses one file (src, or the file itself when src is nil) and
// lists every forbidden import, call, goroutine and channel.
func impurities(t *testing.T, name string, src any) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !allowedImports[path] {
			out = append(out, fmt.Sprintf("%s imports %q: the core must not reach the outside world", name, path))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			out = append(out, fmt.Sprintf("go statement at %v: the core starts no goroutines", fset.Position(x.Pos())))
		case *ast.ChanType, *ast.SelectStmt:
			out = append(out, fmt.Sprintf("channel at %v: the core does not synchronise", fset.Position(n.Pos())))
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok && forbiddenCalls[pkg.Name][x.Sel.Name] {
				out = append(out, fmt.Sprintf("%s.%s at %v: time and randomness come from the caller",
					pkg.Name, x.Sel.Name, fset.Position(x.Pos())))
			}
		}
		return true
	})
	return out
}
