package beam_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// This module is outside the library module's go list ./..., so
// internal/layers does not see it; this test holds its row of DESIGN.md §2
// here: an adapter imports the root or the public packages it exposes
// (nd, job), never the planner, an engine or a backend.
var allowed = []string{"github.com/ndconv/ndconv", "github.com/ndconv/ndconv/nd", "github.com/ndconv/ndconv/job"}

func TestLayers(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	// go test caches a pass by the files this process reads, not those go
	// list reads: stat every .go file of the module (the walk records the
	// directories, so a new file counts too), so that a change to the
	// command or the job binding runs the test again.
	if err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, "list", "-json=ImportPath,Imports", "github.com/ndconv/ndconv/beam/...")
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		hint := ""
		if strings.Contains(stderr.String(), "module lookup disabled") {
			// GOPROXY=off: another platform's module missing from the cache.
			hint = " — the module cache lacks a module of the graph: run `go mod download` in beam/ (scripts/test.sh does)"
		}
		t.Fatalf("go list: %v\n%s%s", err, stderr.Bytes(), hint)
	}
	n := 0
	for dec := json.NewDecoder(bytes.NewReader(out)); ; n++ {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if (imp == "github.com/ndconv/ndconv" || strings.HasPrefix(imp, "github.com/ndconv/ndconv/")) &&
				!strings.HasPrefix(imp, "github.com/ndconv/ndconv/beam") && !slices.Contains(allowed, imp) {
				t.Errorf("forbidden import: %s imports %s; an adapter imports only %v", p.ImportPath, imp, allowed)
			}
		}
	}
	if n < 2 {
		t.Errorf("go list found %d packages of this module; want the pipeline and its command", n)
	}
}
