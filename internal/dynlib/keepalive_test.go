package dynlib

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestNoUintptrHelpers reads the backends' sources and fails on a function
// that returns a Go pointer already converted to uintptr. //go:uintptrescapes
// keeps an object alive only where the conversion stands in the call's own
// argument list; a helper that converts and returns leaves the object free
// to be collected, and its memory reused, while C still reads it. OpenCL's
// ptr(name) for clCreateKernel did exactly that: under 8 goroutines
// NVIDIA's driver read other programs' kernel names and build options
// (CL_INVALID_KERNEL_NAME, wrong kernels cached on disk). Helpers return
// unsafe.Pointer instead, and callers write uintptr(ptr(b)).
func TestNoUintptrHelpers(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range []string{"../../cuda", "../../opencl", "."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				fn, ok := n.(*ast.FuncDecl)
				if !ok || fn.Body == nil || !returnsUintptr(fn.Type) {
					return true
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if ret, ok := n.(*ast.ReturnStmt); ok {
						for _, r := range ret.Results {
							if pointerToUintptr(r) {
								t.Errorf("%s: %s returns a pointer as uintptr; return unsafe.Pointer and convert in the call", fset.Position(ret.Pos()), fn.Name.Name)
							}
						}
					}
					return true
				})
				return true
			})
		}
	}
}

// returnsUintptr reports whether a function's results include a uintptr.
func returnsUintptr(ft *ast.FuncType) bool {
	if ft.Results == nil {
		return false
	}
	for _, r := range ft.Results.List {
		if id, ok := r.Type.(*ast.Ident); ok && id.Name == "uintptr" {
			return true
		}
	}
	return false
}

// pointerToUintptr reports whether e is uintptr(unsafe.Pointer(...)).
func pointerToUintptr(e ast.Expr) bool {
	conv, ok := e.(*ast.CallExpr)
	if !ok || len(conv.Args) != 1 {
		return false
	}
	if id, ok := conv.Fun.(*ast.Ident); !ok || id.Name != "uintptr" {
		return false
	}
	inner, ok := conv.Args[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := inner.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Pointer"
}
