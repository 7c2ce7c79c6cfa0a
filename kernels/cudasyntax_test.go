package kernels

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestCUDASyntax checks, where g++ is installed, that the kernel families
// as portability.h maps them onto CUDA are valid C++ for specialisations of
// every family the direct and separable methods launch (weights by value
// among the parameters and through a buffer): what NVRTC would refuse on a
// GPU host shows up here in CI, before a device run. NDCONV_REQUIRE_GXX=1
// (CI) fails instead of skipping without g++.
func TestCUDASyntax(t *testing.T) {
	check := cudaSyntaxChecker(t)
	factors := func(n ...int) nd.Kernel {
		var f [][]float64
		for _, k := range n {
			v := make([]float64, k)
			for i := range v {
				v[i] = float64(i%3) - 0.5 // all nonzero: ALL_NONZERO
			}
			f = append(f, v)
		}
		return nd.Kernel{Factors: f}
	}
	dense := func(shape ...int) nd.Kernel {
		n := 1
		for _, s := range shape {
			n *= s
		}
		w := make([]float64, n)
		for i := range w {
			w[i] = float64(i % 5) // zeros among them: the NZ bitmap
		}
		return nd.Kernel{Shape: shape, Weights: w}
	}
	type method struct {
		name string
		spec nd.Spec
		dir  DirectOptions
		sep  *SeparableOptions
	}
	sepOpt := func(o SeparableOptions) *SeparableOptions { o.MaxLocalBytes = 48 << 10; return &o }
	cases := []method{
		{"tiled 7x7", nd.Spec{Shape: []int{512, 512}, In: nd.Float32, Kernels: []nd.Kernel{dense(7, 7)}, Border: nd.Reflect}, DirectOptions{}, nil},
		{"tiled RGBA uint8 bank", nd.Spec{Shape: []int{256, 256, 4}, In: nd.Uint8, Kernels: []nd.Kernel{dense(5, 5), dense(5, 5)}, Border: nd.Constant}, DirectOptions{}, nil},
		{"tiled bank groups", nd.Spec{Shape: []int{64, 64, 64}, In: nd.Uint8, Out: nd.Float32, Kernels: []nd.Kernel{dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3)}, Border: nd.Constant}, DirectOptions{Shape: TiledShape{TX: 32, TY: 4, RX: 2, RY: 1, BankGroup: 4}}, nil},
		{"tiled local weights", nd.Spec{Shape: []int{64, 64, 64}, In: nd.Uint8, Out: nd.Float32, Kernels: []nd.Kernel{dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3), dense(3, 3, 3)}, Border: nd.Reflect}, DirectOptions{Shape: TiledShape{TX: 32, TY: 4, RX: 8, RY: 1, BankGroup: 4, LocalWeights: true, MinGroups: 2}}, nil},
		{"bank 3-D", nd.Spec{Shape: []int{64, 64, 64}, In: nd.Float32, Kernels: []nd.Kernel{factors(3, 3, 3), factors(3, 3, 3)}, Border: nd.Reflect}, DirectOptions{Shape: BankShape{Lanes: 2, Cols: 64, TileX: 32, TileY: 16}}, nil},
		{"bank uint8 zeros float64", nd.Spec{Shape: []int{64, 64}, In: nd.Uint8, Out: nd.Float64, Kernels: []nd.Kernel{dense(3, 3), dense(3, 3), dense(3, 3), dense(3, 3)}, Border: nd.Constant}, DirectOptions{Shape: BankShape{Lanes: 2, Cols: 32, TileX: 32, TileY: 8}}, nil},
		{"rolling 3-D", nd.Spec{Shape: []int{64, 64, 64}, In: nd.Float32, Kernels: []nd.Kernel{dense(3, 3, 3)}, Border: nd.Wrap}, DirectOptions{}, nil},
		{"rows uint8 L2", nd.Spec{Shape: []int{4096, 4096}, In: nd.Uint8, Kernels: []nd.Kernel{dense(3, 3)}, Border: nd.Mirror}, DirectOptions{}, nil},
		{"window 1-D", nd.Spec{Shape: []int{1 << 20}, In: nd.Float32, Kernels: []nd.Kernel{dense(63)}, Border: nd.Nearest}, DirectOptions{Shape: TiledShape{TX: 64, TY: 1, RX: 8, RY: 1, Window: true}}, nil},
		{"direct.cl float64", nd.Spec{Shape: []int{64, 64}, In: nd.Float64, Kernels: []nd.Kernel{dense(3, 3)}, Border: nd.Constant}, DirectOptions{Untiled: true}, nil},
		{"separable.cl", nd.Spec{Shape: []int{64, 64}, In: nd.Uint16, Kernels: []nd.Kernel{factors(5, 5)}, Border: nd.Reflect}, DirectOptions{}, sepOpt(SeparableOptions{Unfused: true})},
		{"septile", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Uint8, Kernels: []nd.Kernel{factors(31, 31)}, Border: nd.Constant}, DirectOptions{}, sepOpt(SeparableOptions{})},
		{"sepfused", nd.Spec{Shape: []int{4096, 4096}, In: nd.Float32, Kernels: []nd.Kernel{factors(7, 7)}, Border: nd.Wrap}, DirectOptions{}, sepOpt(SeparableOptions{})},
		{"sepring", nd.Spec{Shape: []int{8192, 8192}, In: nd.Float32, Kernels: []nd.Kernel{factors(31, 31)}, Border: nd.Constant}, DirectOptions{}, sepOpt(SeparableOptions{})},
		{"sep3 float64", nd.Spec{Shape: []int{256, 256, 256}, In: nd.Float64, Kernels: []nd.Kernel{factors(3, 3, 3)}, Border: nd.Mirror}, DirectOptions{}, sepOpt(SeparableOptions{})},
	}
	families := map[string]bool{}
	for _, c := range cases {
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, params := range []int{0, 4096} {
			var launches []*Launch
			if c.sep != nil {
				opt := *c.sep
				opt.MaxParamBytes = params
				s, err := NewSeparable(p, opt)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				for _, st := range s.Steps {
					launches = append(launches, st.Launch)
				}
			} else {
				opt := c.dir
				opt.MaxLocalBytes, opt.MaxGroupsYZ, opt.MaxParamBytes = 48<<10, 65535, params
				l, err := NewDirect(p, opt)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				launches = append(launches, l)
			}
			for _, l := range launches {
				families[l.Family] = true
				if out, err := check(l, ""); err != nil {
					t.Errorf("%s (%s, weights in parameters: %v): g++: %v\n%s", c.name, l.Family, l.TapsInParams, err, out)
				}
			}
		}
	}
	for _, f := range []string{"direct", "tiled", "rows", "bank", "separable", "septile", "sepfused", "sepring", "sep3"} {
		if !families[f] {
			t.Errorf("no case launched %s.cl", f)
		}
	}
}

// cudaSyntaxChecker finds g++ (skipping the test without it, unless
// NDCONV_REQUIRE_GXX=1) and returns a check of one launch: its family's
// source with its defines, after prelude, compiled by g++ -fsyntax-only
// as portability.h maps it onto CUDA (testdata/cuda_stub.h), giving g++'s
// first lines where it fails.
func cudaSyntaxChecker(t *testing.T) func(l *Launch, prelude string) (string, error) {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("NDCONV_REQUIRE_GXX") == "1" {
			t.Fatal("NDCONV_REQUIRE_GXX=1 and no g++")
		}
		t.Skip("no g++ here")
	}
	stub, err := filepath.Abs("testdata/cuda_stub.h")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	return func(l *Launch, prelude string) (string, error) {
		src, err := Source(l.Family)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		b.WriteString(prelude)
		for _, d := range l.Defines {
			name, value, _ := strings.Cut(d, "=")
			fmt.Fprintf(&b, "#define %s %s\n", name, value)
		}
		b.WriteString(src)
		n++
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.cu", l.Family, n))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			return "", err
		}
		out, err := exec.Command(gxx, "-std=c++17", "-fsyntax-only", "-Wno-unknown-pragmas", "-x", "c++",
			"-D__CUDACC__", "-include", stub, path).CombinedOutput()
		return firstLines(string(out), 12), err
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
