package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ndconv/ndconv"

var strict = flag.Bool("strict", false, "fail on an exception or a rule that no longer matches an import or a package")

// A rule says what the packages of one layer may import besides the
// standard library and nd (the lowest layer, the types every layer speaks). Package names are relative to the module ("." is the
// root, "x/..." is x and every package under it). Rules are not
// transitive: a layer lists every package it may import, so that "the
// bindings import gpu's interface and their loader only" stays true even
// though gpu imports more. Every package of the module is named by exactly
// one rule; a new package fails the test until it is placed.
type rule struct {
	pkgs []string // the layer
	may  []string // module packages the layer may import
	ext  []string // other modules' import paths (and those under them) it may import
	why  string   // the rule of DESIGN.md §2 this row writes
}

// Test support: imported only by _test files (and by one another). It sits
// beside the engines: it may import them and what is below them, never the
// planner, the backends' bindings or the root (their tests import it).
var testSupport = []string{
	"internal/cputime",
	"internal/enginetest",
	"internal/filterfixtures",
	"internal/fuzzcorpus",
	"internal/gputest",
	"internal/kerneltest",
	"internal/s3test",
}

// Layers of DESIGN.md §2, lowest first. docs/architecture.md draws them.
var rules = []rule{
	{pkgs: []string{"nd"},
		why: "nd is lowest: the types every layer speaks (every layer may import it); it imports only the standard library"},
	{pkgs: []string{"internal/fft"}, ext: []string{"golang.org/x/sys/cpu"},
		why: "the FFT math: complex64 transforms"},
	{pkgs: []string{"internal/fftconv"}, may: []string{"internal/fft"},
		why: "the FFT math: overlap-save geometry and the error bound, device-neutral"},
	{pkgs: []string{"internal/ref"},
		why: "internal/ref depends only on nd"},
	{pkgs: []string{"internal/winograd"},
		why: "the Winograd math (transforms, error bound, transformed weights) and its CPU engine, device-neutral: nd only"},
	{pkgs: []string{"filters"},
		why: "filters depend only on nd"},
	{pkgs: []string{"zarr"}, ext: []string{"github.com/klauspost/compress", "github.com/pierrec/lz4/v4"},
		why: "zarr (arrays in stores, their codecs) depends only on nd and its codecs' libraries"},
	{pkgs: []string{"zarr/blobstore"}, may: []string{"zarr"},
		ext: []string{"gocloud.dev", "github.com/aws/aws-sdk-go-v2", "github.com/Azure/azure-sdk-for-go/sdk/azcore", "google.golang.org/api/googleapi"},
		why: "zarr/blobstore (Zarr stores in buckets) depends on zarr, nd and gocloud.dev's blob drivers (and the SDKs' error and S3 client types they expose)"},
	{pkgs: []string{"imageio/..."}, may: []string{"imageio/...", "zarr", "zarr/blobstore"},
		ext: []string{"golang.org/x/sys/unix", "golang.org/x/sys/cpu", "golang.org/x/image", "github.com/klauspost/compress/flate", "github.com/klauspost/compress/zlib"},
		why: "imageio (and its formats) depend only on nd, and on zarr (and its bucket stores) for .zarr (x/sys/cpu: the JPEG codec's AVX2 kernels)"},
	{pkgs: []string{"kernels"}, may: []string{"internal/fft", "internal/fftconv", "internal/winograd"},
		why: "kernels depend only on nd and the FFT math whose plans they build"},
	{pkgs: []string{"chunk"},
		why: "chunk splits an nd.Problem; every engine's pipeline runs over it, so it sits below them"},
	{pkgs: []string{"cpu/internal/simd"}, ext: []string{"golang.org/x/sys/cpu"},
		why: "the CPU engine's vector loops"},
	{pkgs: []string{"cpu/internal/simd/neon"},
		why: "the generator of the arm64 loops (go generate): the standard library only"},
	{pkgs: []string{"cpu"}, may: []string{"chunk", "cpu/internal/simd", "internal/fft", "internal/fftconv"}, ext: []string{"golang.org/x/sys/cpu"},
		why: "the CPU engine: its loops, the FFT math and chunk; no GPU code, no planner (x/sys/cpu names the processor's features)"},
	{pkgs: []string{"internal/dynlib"}, ext: []string{"github.com/ebitengine/purego"},
		why: "the bindings' loader: finds and opens C libraries"},
	{pkgs: []string{"internal/gpucache"},
		why: "the compiled-artifact cache: files and keys"},
	{pkgs: []string{"internal/gpu"},
		may: []string{"chunk", "kernels", "internal/fft", "internal/fftconv", "internal/gpucache", "internal/dynlib", "internal/winograd"},
		why: "the GPU code written once (DESIGN's gpu/): imports kernels and the GPU-shared leaves (its errors wrap the loader's), never cuda or opencl"},
	{pkgs: []string{"cuda", "opencl"}, may: []string{"internal/gpu", "internal/dynlib", "internal/gpucache"},
		why: "the bindings import gpu's interface, their loader and cache only; never plan, chunk or the root"},
	{pkgs: []string{"plan"}, may: []string{"chunk", "kernels", "internal/fft", "internal/fftconv", "internal/gpu", "internal/gpucache", "internal/winograd"},
		why: "the planner sees backends only through an interface (its wisdom holds kernel tunings)"},
	{pkgs: []string{"."},
		may: []string{"chunk", "plan", "filters", "imageio/...", "cpu", "cuda", "opencl", "internal/gpu"},
		why: "the root is the public API over the planner; it may name the backends to register them, once"},
	{pkgs: []string{"internal/sample"}, may: []string{"imageio/..."},
		why: "the demo's embedded data, read with imageio"},
	{pkgs: []string{"bench"}, may: []string{".", "filters", "imageio/..."},
		why: "bench imports the root (or public packages the root exposes), never the planner, chunk, kernels or a backend"},
	{pkgs: []string{"bench/report"}, may: []string{"bench"}, ext: []string{"gonum.org/v1/plot"},
		why: "bench's report: plots bench's results"},
	{pkgs: []string{"job"}, may: []string{".", "chunk", "filters", "imageio/...", "zarr", "zarr/blobstore"},
		why: "job (plans and block workers for every engine) imports the root, and the Zarr and imageio packages it writes with; chunk for the boxes it reads and writes"},
	{pkgs: []string{"cmd/..."}, may: []string{".", "filters", "imageio/...", "zarr", "job", "bench/...", "internal/sample"},
		ext: []string{"github.com/spf13/cobra", "github.com/spf13/pflag", "github.com/schollz/progressbar/v3", "golang.org/x/term", "golang.org/x/sys/cpu"},
		why: "cmd imports the root (or public packages the root exposes), never the planner, chunk, kernels or a backend"},
	{pkgs: []string{"capi"}, may: []string{".", "filters", "imageio/...", "zarr", "job"},
		why: "capi imports the root (or public packages the root exposes), never the planner, chunk, kernels or a backend"},
	{pkgs: testSupport,
		may: append([]string{"internal/fft", "internal/fftconv", "internal/ref", "filters", "imageio/...",
			"kernels", "chunk", "cpu", "internal/gpu", "internal/gpucache"}, testSupport...),
		ext: []string{"github.com/johannesboyne/gofakes3"},
		why: "test support sits beside the engines and is imported only by tests (s3test serves gofakes3)"},
	{pkgs: []string{"internal/layers"},
		why: "this test"},
}

// Arrows that run against the rules today. Each is work of issue 31 still
// to do; a new forbidden arrow fails the test, and so does an exception
// that is no longer needed (delete its line).
var exceptions = []struct{ from, to, why string }{
	// issue 31 item 2: the engine (pipelines, FFT orchestration, kernel
	// launches) still lives twice, in the bindings, instead of once in gpu/.
	{"cuda", "kernels", "issue 31: the binding builds a family's source (kernels.Source) and plans launches for warm-up's counts"},
	{"opencl", "kernels", "issue 31: the binding builds a family's source (kernels.Source) and checks launches against the device"},
	{"opencl", "internal/fftconv", "issue 31: the binding's FFT budget is fftconv.DefaultBudget"},

	// issue 31 item 3: backends are values registered once (plan.Backend),
	// but their adapters (plan/backend_cpu.go, backend_cuda.go,
	// backend_opencl.go) live in plan, since the engine packages cannot
	// import it; they move out with the engines.
	{"plan", "cpu", "issue 31: the CPU backend's adapter (plan/backend_cpu.go) lives in plan"},
	{"plan", "cuda", "issue 31: the CUDA backend's adapter (plan/backend_cuda.go) lives in plan"},
	{"plan", "opencl", "issue 31: the OpenCL backend's adapter (plan/backend_opencl.go) lives in plan"},
}

// pkg is what the test reads of `go list -json`.
type pkg struct {
	ImportPath string
	Standard   bool
	DepOnly    bool
	Imports    []string
	Error      *struct{ Err string }
}

// match reports whether the module-relative name rel is one of patterns.
func match(patterns []string, rel string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == base || strings.HasPrefix(rel, base+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// under reports whether path is prefix or a package under it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// rel is path relative to the module: "." for the root, "" outside it.
func rel(path string) string {
	if path == module {
		return "."
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return ""
}

// configs are the builds whose imports are read: the one this test runs
// on, and one that takes every other side of the module's build
// constraints (not unix, not linux/darwin/freebsd/netbsd, not amd64, the
// noasm and ndconv_testhook tags).
var configs = []struct {
	name string
	env  []string
	args []string
}{
	{name: "this build"},
	{name: "plan9/amd64 noasm,ndconv_testhook", env: []string{"GOOS=plan9", "GOARCH=amd64", "CGO_ENABLED=0"},
		args: []string{"-tags=noasm,ndconv_testhook"}},
}

// list runs `go list -deps -json` over the module in each of configs and
// returns its packages (the non-test code) with the union of their
// imports, and every standard package among what they import. The go
// command is given no proxy: the modules it reads are those the build of
// this test has already fetched.
func list(t *testing.T) (pkgs map[string][]string, std map[string]bool) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the import graph: %v", err)
	}
	track(t, goCmd)
	pkgs, std = map[string][]string{}, map[string]bool{"C": true} // cgo's pseudo-package
	for _, c := range configs {
		args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Standard,DepOnly,Imports,Error"}, c.args...)
		cmd := exec.Command(goCmd, append(args, module+"/...")...)
		cmd.Env = append(os.Environ(), append([]string{"GOPROXY=off", "GOFLAGS="}, c.env...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v\n%s%s", c.name, err, stderr.Bytes(), offlineHint(stderr.String()))
		}
		for dec := json.NewDecoder(bytes.NewReader(out)); ; {
			var p pkg
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("reading go list's output (%s): %v", c.name, err)
			}
			switch {
			case p.Standard:
				std[p.ImportPath] = true
			case rel(p.ImportPath) == "" || p.DepOnly:
			case p.Error != nil:
				t.Errorf("%s (%s): %s%s", p.ImportPath, c.name, p.Error.Err, offlineHint(p.Error.Err))
			default:
				imps := pkgs[p.ImportPath]
				for _, imp := range p.Imports {
					if !slices.Contains(imps, imp) {
						imps = append(imps, imp)
					}
				}
				pkgs[p.ImportPath] = imps
			}
		}
	}
	return pkgs, std
}

// track makes go test's cache see what go list read: go test records the
// files and directories the test process itself opens or stats, not those
// its child processes read, so without this a cached pass would hide a
// forbidden import added later. It stats go.mod, go.sum and every .go file
// of the module (a directory listing is recorded as it is read, so a new
// file counts too), and reads the variables that choose the build.
func track(t *testing.T, goCmd string) {
	out, err := exec.Command(goCmd, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		t.Fatalf("go env GOMOD = %q, %v: the test must run inside the module", gomod, err)
	}
	root := filepath.Dir(gomod)
	for _, v := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "GOWORK", "GOTOOLCHAIN"} {
		os.Getenv(v)
	}
	os.Stat(filepath.Join(root, "go.sum"))
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// What the go command ignores: testdata, dot and underscore
			// directories, and nested modules.
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") || name == "go.mod" {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("reading the module's files: %v", err)
	}
}

// TestLayers fails on every import of non-test code that the rules do not
// allow and that is not a listed exception.
func TestLayers(t *testing.T) {
	pkgs, std := list(t)
	used := make([]bool, len(exceptions))
	exception := func(from, to string) bool {
		for i, e := range exceptions {
			if e.from == from && e.to == to {
				used[i] = true
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		from := rel(path)
		seen[from] = true
		var r *rule
		for i := range rules {
			if match(rules[i].pkgs, from) {
				if r != nil {
					t.Errorf("%s is in two layers of the table", from)
				}
				r = &rules[i]
			}
		}
		if r == nil {
			t.Errorf("%s is in no layer: add it to a rule of internal/layers/layers_test.go and to docs/architecture.md", from)
			continue
		}
		for _, imp := range pkgs[path] {
			if std[imp] {
				continue
			}
			to := rel(imp)
			switch {
			case to == "":
				if !slices.ContainsFunc(r.ext, func(e string) bool { return under(imp, e) }) {
					t.Errorf("forbidden import: %s imports %s, another module's package its layer does not list (%s)", from, imp, r.why)
				}
			case match(testSupport, to) && !match(testSupport, from):
				t.Errorf("forbidden import: %s imports the test support %s; only _test files may", from, to)
			case to == "." && !match(r.may, to):
				t.Errorf("forbidden import: %s imports the root; nothing below the root may", from)
			case to == "nd" || match(r.may, to):
				// allowed
			case exception(from, to):
				// a known arrow of issue 31
			default:
				t.Errorf("forbidden import: %s imports %s (%s)", from, to, r.why)
			}
		}
	}
	// An exception or a rule that matches nothing fails only under
	// -strict: while several branches fold issue 31's arrows away at once,
	// one branch's table may list an arrow another has just removed.
	stale := t.Logf
	if *strict {
		stale = t.Errorf
	}
	for i, e := range exceptions {
		switch {
		case !seen[e.from]:
			stale("exception %s → %s: no package %s; delete the line", e.from, e.to, e.from)
		case !used[i]:
			stale("exception %s → %s: %s no longer imports %s (or its layer allows it); delete the line", e.from, e.to, e.from, e.to)
		}
	}
	for _, r := range rules {
		for _, p := range r.pkgs {
			found := false
			for s := range seen {
				found = found || match([]string{p}, s)
			}
			if !found {
				stale("rule %q names no package of the module; delete or rename it", p)
			}
		}
	}
	t.Logf("%d packages, %d known exceptions", len(pkgs), len(exceptions))
}

// offlineHint explains go list's failure with the network off (GOPROXY=off,
// so that the test never downloads): a module of another platform's graph
// missing from the module cache, which `go mod download` (scripts/test.sh
// runs it) fetches.
func offlineHint(msg string) string {
	if strings.Contains(msg, "module lookup disabled") {
		return " — the module cache lacks a module of the graph: run `go mod download` (scripts/test.sh does)"
	}
	return ""
}
