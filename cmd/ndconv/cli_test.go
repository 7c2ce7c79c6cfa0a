package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/nd"
)

// binaryPath is the ndconv command built once for the tests that run it,
// in cliTempDir.
var binaryPath, cliTempDir string

// On a machine without Go (the GPU host), NDCONV_CLI_BINARY and
// NDCONV_CLI_HOOK_BINARY name prebuilt binaries (`go build -o … ./cmd/ndconv`,
// the second with -tags ndconv_testhook), so that a test binary built here
// (`go test -c`) runs the CLI tests there.
var prebuiltHook = os.Getenv("NDCONV_CLI_HOOK_BINARY")

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ndconv-cli")
	if err != nil {
		panic(err)
	}
	cliTempDir = dir
	// The binaries the tests start are no test binaries: they would keep
	// their compiled kernels and tuning in the user's caches. They get the
	// test processes' directory instead (gpucache.UserDir under go test).
	if os.Getenv(gpucache.DirEnv) == "" {
		cache, err := gpucache.UserDir()
		if err != nil {
			panic(err)
		}
		os.Setenv(gpucache.DirEnv, cache)
		if os.Getenv("NDCONV_TUNING") == "" {
			os.Setenv("NDCONV_TUNING", filepath.Join(cache, "tuning.json"))
		}
	}
	binaryPath = filepath.Join(dir, "ndconv")
	if pre := os.Getenv("NDCONV_CLI_BINARY"); pre != "" {
		if binaryPath, err = filepath.Abs(pre); err != nil {
			panic(err)
		}
	} else {
		build := exec.Command("go", "build", "-tags", strings.Join(cliTags, ","), "-o", binaryPath, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			panic("building ndconv: " + err.Error())
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ndconvCLI runs the built binary in dir and returns its exit status,
// stdout and stderr.
func ndconvCLI(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binaryPath, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func writeNPY(t *testing.T, path string, a nd.Array) {
	t.Helper()
	if err := imageio.WriteNPYFile(path, a); err != nil {
		t.Fatal(err)
	}
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ramp(dt nd.DType, shape ...int) nd.Array {
	a, _ := nd.New(dt, shape...)
	v := make([]float64, a.Len())
	for i := range v {
		v[i] = float64((i * 37) % 101)
	}
	nd.Store(a.Data, 0, 1, v)
	return a
}

// TestCorrelateMatchesLibrary: the CLI's output file equals the library's
// result for the same request, for a single kernel from .csv and a bank from
// .npy and .txt.
func TestCorrelateMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	in := ramp(nd.Uint8, 20, 30)
	writeNPY(t, filepath.Join(dir, "in.npy"), in)
	writeText(t, filepath.Join(dir, "k.csv"), "1, 2, 1\n0, 0, 0\n-1, -2, -1\n")
	writeText(t, filepath.Join(dir, "k.txt"), "# a comment\n0 1 0\n1 -4 1\n0 1 0\n")
	k2 := ramp(nd.Float64, 3, 3)
	writeNPY(t, filepath.Join(dir, "k2.npy"), k2)

	code, stdout, stderr := ndconvCLI(t, dir, "correlate", "-k", "k.csv", "--border", "constant", "--cval", "7", "--dtype", "float32", "in.npy", "out.npy")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "correlate") {
		t.Errorf("no summary on stdout: %q", stdout)
	}
	got, err := imageio.ReadNPYFile(filepath.Join(dir, "out.npy"))
	if err != nil {
		t.Fatal(err)
	}
	k := ndconv.NewKernel([]int{3, 3}, []float64{1, 2, 1, 0, 0, 0, -1, -2, -1})
	want, err := ndconv.Correlate(context.Background(), in, ndconv.Options{Border: ndconv.Constant, CVal: 7, DType: ndconv.Float32}, k)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Data.([]float32), want.Data.([]float32)) {
		t.Error("CLI output differs from the library's")
	}

	code, _, stderr = ndconvCLI(t, dir, "convolve", "-k", "k.txt", "-k", "k2.npy", "--mode", "full", "--origin", "0", "in.npy", "bank.npy")
	if code != 0 {
		t.Fatalf("bank: exit %d: %s", code, stderr)
	}
	bank, err := imageio.ReadNPYFile(filepath.Join(dir, "bank.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bank.Shape, []int{22, 32, 2}) || bank.DType() != nd.Uint8 {
		t.Errorf("bank output %v %v, want uint8 [22 32 2]", bank.DType(), bank.Shape)
	}
}

// TestFFTSummary: auto takes FFT for a large kernel and says so on the
// summary line; --exact keeps auto to the exact methods; --exact with
// --method fft is a usage error; the FFT's output is within rounding of
// the direct method's.
func TestFFTSummary(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 128, 96))
	k := ramp(nd.Float64, 63, 63)
	writeNPY(t, filepath.Join(dir, "k.npy"), k)
	code, stdout, stderr := ndconvCLI(t, dir, "correlate", "-k", "k.npy", "--device", "cpu", "in.npy", "fft.npy")
	if code != 0 || !strings.Contains(stdout, "fft (differs from the exact methods by rounding) on cpu") {
		t.Fatalf("auto: exit %d, %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = ndconvCLI(t, dir, "correlate", "-k", "k.npy", "--device", "cpu", "--exact", "in.npy", "exact.npy")
	if code != 0 || !strings.Contains(stdout, ": direct on cpu") {
		t.Fatalf("--exact: exit %d, %q %q", code, stdout, stderr)
	}
	if code, _, stderr = ndconvCLI(t, dir, "correlate", "-k", "k.npy", "--exact", "--method", "fft", "in.npy", "x.npy"); code != 2 || !strings.Contains(stderr, "--exact") {
		t.Errorf("--exact --method fft: exit %d, %q", code, stderr)
	}
	fft, _ := imageio.ReadNPYFile(filepath.Join(dir, "fft.npy"))
	exact, _ := imageio.ReadNPYFile(filepath.Join(dir, "exact.npy"))
	absSum := 0.0
	for _, v := range k.Float64s() {
		absSum += math.Abs(v)
	}
	worst := 0.0
	for i, v := range fft.Float64s() {
		worst = max(worst, math.Abs(v-exact.Float64s()[i]))
	}
	// 100 is the input's largest value; 1e-5 far above float32 rounding
	// at these sizes, far below any semantic difference.
	if worst > 1e-5*absSum*100 || worst == 0 {
		t.Errorf("FFT differs from direct by %g (Σ|w| = %g)", worst, absSum)
	}
}

// TestRawAndInPlace: a .raw input with --shape and --input-dtype, written
// back over itself.
func TestRawAndInPlace(t *testing.T) {
	dir := t.TempDir()
	vals := []int16{-5, 3, 9, -1, 0, 4}
	raw := make([]byte, 2*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(v))
	}
	path := filepath.Join(dir, "x.raw")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(dir, "k.csv"), "1,1\n")
	code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "--axes", "1", "--shape", "2,3", "--input-dtype", "int16", "x.raw", "x.raw")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out, _ := os.ReadFile(path)
	got := make([]int16, len(out)/2)
	for i := range got {
		got[i] = int16(binary.LittleEndian.Uint16(out[2*i:]))
	}
	// Even kernel, origin 0: out[i] = x[i-1] + x[i], reflect at the start.
	if want := []int16{-10, -2, 12, -2, -1, 4}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries after an in-place run", len(entries))
	}
}

// TestBadInput: every bad input gets a non-zero exit, one line on stderr
// naming the problem, and leaves no output (nor temporary) file.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 6, 7))
	writeNPY(t, filepath.Join(dir, "small.npy"), ramp(nd.Float32, 2, 2))
	writeNPY(t, filepath.Join(dir, "k1d.npy"), ramp(nd.Float64, 3))
	writeNPY(t, filepath.Join(dir, "k3d.npy"), ramp(nd.Float64, 2, 2, 2))
	writeNPY(t, filepath.Join(dir, "k0.npy"), nd.Array{Shape: []int{0}, Data: []float64{}})
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	writeText(t, filepath.Join(dir, "k22.csv"), "1,2\n3,4\n")
	writeText(t, filepath.Join(dir, "nan.csv"), "1,nan,1\n")
	writeText(t, filepath.Join(dir, "inf.csv"), "1,inf,1\n")
	writeText(t, filepath.Join(dir, "ragged.csv"), "1,2,3\n1,2\n")
	writeText(t, filepath.Join(dir, "words.csv"), "one,two\n")
	writeText(t, filepath.Join(dir, "gap.csv"), "1,,3\n")
	writeText(t, filepath.Join(dir, "semicolons.csv"), "1;2;3\n")
	writeText(t, filepath.Join(dir, "trailing.csv"), "1,2,3,\n")
	writeText(t, filepath.Join(dir, "corrupt.npy"), "this is not numpy")
	var good bytes.Buffer
	imageio.WriteNPY(&good, ramp(nd.Float32, 6, 7))
	os.WriteFile(filepath.Join(dir, "truncated.npy"), good.Bytes()[:good.Len()-9], 0o644)
	huge := strings.Replace(good.String(), "(6, 7)", "(99999999999, 99999999999)", 1)
	os.WriteFile(filepath.Join(dir, "huge.npy"), []byte(huge), 0o644)
	for name, descr := range map[string]string{"complex.npy": "<c8", "bool.npy": "|b1", "object.npy": "|O"} {
		os.WriteFile(filepath.Join(dir, name), []byte(strings.Replace(good.String(), "<f4", descr, 1)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "in.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(dir, "in.gif"), []byte("GIF89a"), 0o644)
	os.WriteFile(filepath.Join(dir, "x.raw"), make([]byte, 10), 0o644)
	// Unreadable files: a directory in their place (permission bits do not
	// stop root, which CI may run as).
	os.Mkdir(filepath.Join(dir, "dir.npy"), 0o755)
	os.Mkdir(filepath.Join(dir, "dir.csv"), 0o755)

	cases := []struct {
		name string
		code int
		want string
		args []string
	}{
		{"missing input", 1, "no such file", []string{"-k", "k.csv", "missing.npy"}},
		{"unreadable input", 1, "is a directory", []string{"-k", "k.csv", "dir.npy"}},
		{"unreadable kernel", 1, "is a directory", []string{"-k", "dir.csv", "in.npy"}},
		{"missing kernel", 1, "nope.csv: no such file", []string{"-k", "nope.csv", "in.npy"}},
		{"unknown input extension", 1, "extension", []string{"-k", "k.csv", "in.gif"}},
		{"corrupt png", 1, "not a PNG file", []string{"-k", "k.csv", "in.png"}},
		{"unknown kernel extension", 2, "kernel file type", []string{"-k", "in.png", "in.npy"}},
		{"corrupt npy", 1, "not a .npy file", []string{"-k", "k.csv", "corrupt.npy"}},
		{"truncated npy", 1, "truncated", []string{"-k", "k.csv", "truncated.npy"}},
		{"huge shape", 1, "more than", []string{"-k", "k.csv", "huge.npy"}},
		{"complex", 1, "complex", []string{"-k", "k.csv", "complex.npy"}},
		{"bool", 1, "bool", []string{"-k", "k.csv", "bool.npy"}},
		{"object", 1, "object", []string{"-k", "k.csv", "object.npy"}},
		{"kernel rank above input", 1, "3-D kernel cannot filter a 2-D input", []string{"-k", "k3d.npy", "in.npy"}},
		{"kernel axis of length 0", 1, "length 0", []string{"-k", "k0.npy", "in.npy"}},
		{"NaN in kernel", 1, "NaN", []string{"-k", "nan.csv", "in.npy"}},
		{"Inf in kernel", 1, "Inf", []string{"-k", "inf.csv", "in.npy"}},
		{"ragged csv", 1, "line 2 has 2 values", []string{"-k", "ragged.csv", "in.npy"}},
		{"words in csv", 1, "not a number", []string{"-k", "words.csv", "in.npy"}},
		// numpy.loadtxt refuses these three; they were read as [1 3], [1 2 3], [1 2 3].
		{"empty csv value", 1, "line 1, field 2: an empty value", []string{"-k", "gap.csv", "in.npy"}},
		{"semicolons in csv", 1, `line 1, field 1: "1;2;3" is not a number`, []string{"-k", "semicolons.csv", "in.npy"}},
		{"trailing comma in csv", 1, "line 1, field 4: an empty value", []string{"-k", "trailing.csv", "in.npy"}},
		{"origin out of range", 1, "origin", []string{"-k", "k.csv", "--origin", "2", "in.npy"}},
		{"origin not a number", 2, "--origin", []string{"-k", "k.csv", "--origin", "x", "in.npy"}},
		{"valid too small", 1, "valid needs", []string{"-k", "k.csv", "--mode", "valid", "small.npy"}},
		{"axes out of range", 1, "out of range", []string{"-k", "k.csv", "--axes", "0,2", "in.npy"}},
		{"axes repeated", 1, "twice", []string{"-k", "k.csv", "--axes", "1,1", "in.npy"}},
		{"bank output shapes differ", 1, "one shape", []string{"-k", "k.csv", "-k", "k22.csv", "--mode", "valid", "in.npy"}},
		{"unknown border", 2, "unsupported border", []string{"-k", "k.csv", "--border", "circular", "in.npy"}},
		{"unknown mode", 2, "unsupported mode", []string{"-k", "k.csv", "--mode", "half", "in.npy"}},
		{"unknown dtype", 2, "unsupported dtype", []string{"-k", "k.csv", "--dtype", "complex256", "in.npy"}},
		{"unknown device", 2, "unsupported device", []string{"-k", "k.csv", "--device", "tpu", "in.npy"}},
		{"unavailable device", 1, "unavailable", []string{"-k", "k.csv", "--device", "cuda", "in.npy"}},
		{"no kernel", 2, "no kernel", []string{"in.npy"}},
		{"unknown flag", 2, "unknown flag", []string{"-k", "k.csv", "--bogus", "in.npy"}},
		{"raw without shape", 1, "--shape", []string{"-k", "k1d.npy", "x.raw"}},
		{"raw size mismatch", 1, "the file has 10 bytes", []string{"-k", "k1d.npy", "--shape", "3,3", "--input-dtype", "uint8", "x.raw"}},
		{"separable not rank-1", 1, "separable", []string{"-k", "k22.csv", "--method", "separable", "in.npy"}},
		{"unknown named filter", 2, `unknown filter "blur" (known: gaussian`, []string{"-k", "blur:sigma=2", "in.npy"}},
		{"unknown filter parameter", 2, "radius", []string{"-k", "gaussian:radius=2", "in.npy"}},
		{"negative sigma", 2, "sigma", []string{"-k", "gaussian:sigma=-1", "in.npy"}},
		{"size 0", 2, "size", []string{"-k", "uniform:size=0", "in.npy"}},
		// Was "invalid shape: [800001 800001] has more than … elements", exit 1.
		{"gaussian too wide", 2, "sigma=100000: the kernel would span 800001×800001", []string{"-k", "gaussian:sigma=1e5", "in.npy"}},
		{"truncate 0", 2, "truncate", []string{"-k", "gaussian:sigma=1,truncate=0", "in.npy"}},
		{"sobel axis out of range", 2, "axis", []string{"-k", "sobel:axis=2", "in.npy"}},
		{"gabor on a volume", 2, "2-D", []string{"-k", "gabor:frequency=0.2", "k3d.npy"}},
		{"gabor bank without gabor", 2, "--gabor-bank", []string{"-k", "sobel", "--gabor-bank", "4", "in.npy"}},
		{"missing kernel path", 1, "no such file", []string{"-k", "kernels/blur.npy", "in.npy"}},
		{"unknown border lists aliases", 2, "nearest (edge, replicate)", []string{"-k", "k.csv", "--border", "periodic", "in.npy"}},
		{"outer: 2-D factor", 1, "must be 1-D", []string{"-k", "outer:k1d.npy,k.csv", "in.npy"}},
		{"outer: missing factor", 1, "no such file", []string{"-k", "outer:k1d.npy,nope.csv", "in.npy"}},
		{"outer: empty factor", 2, "empty factor file name", []string{"-k", "outer:k1d.npy,", "in.npy"}},
		{"outer: nothing", 2, "empty factor file name", []string{"-k", "outer:", "in.npy"}},
		{"outer: too many factors", 1, "3-D kernel cannot filter a 2-D input", []string{"-k", "outer:k1d.npy,k1d.npy,k1d.npy", "in.npy"}},
		{"negative workers", 2, "--workers", []string{"-k", "k.csv", "--workers", "-1", "in.npy"}},
		{"workers not a number", 2, "--workers", []string{"-k", "k.csv", "--workers", "two", "in.npy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out.npy")
			args := append(append([]string{"correlate"}, c.args...), out)
			code, _, stderr := ndconvCLI(t, dir, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not mention %q", stderr, c.want)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 {
				t.Errorf("stderr has %d lines: %q", lines+1, stderr)
			}
			assertNoOutput(t, dir, "out.npy")
		})
	}
	t.Run("bank into an image format", func(t *testing.T) {
		code, _, stderr := ndconvCLI(t, dir, "correlate", "-k", "sobel:axis=0", "-k", "sobel:axis=1", "in.npy", "out.png")
		if code != 2 || !strings.Contains(stderr, ".npy or .tif") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		assertNoOutput(t, dir, "out.png")
	})
	t.Run("output directory missing", func(t *testing.T) {
		code, _, stderr := ndconvCLI(t, dir, "correlate", "-k", "k.csv", "in.npy", "no/such/dir/out.npy")
		if code != 1 || !strings.Contains(stderr, "does not exist") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("wrong argument count", func(t *testing.T) {
		if code, _, _ := ndconvCLI(t, dir, "correlate", "-k", "k.csv", "in.npy"); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
}

// TestBorderAliasesFactorsWorkers: every border alias gives the output of
// the name it stands for, outer:a,b equals the dense outer product, and
// --workers does not change a bit.
func TestBorderAliasesFactorsWorkers(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 9, 11))
	writeText(t, filepath.Join(dir, "a.csv"), "1, 2, -1\n")
	writeNPY(t, filepath.Join(dir, "b.npy"), nd.Array{Shape: []int{4}, Data: []float64{0.5, -1, 3, 0.25}})
	writeText(t, filepath.Join(dir, "ab.csv"), "0.5,-1,3,0.25\n1,-2,6,0.5\n-0.5,1,-3,-0.25\n")
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,0\n-3,4,1\n")
	read := func(args ...string) []float32 {
		t.Helper()
		out := filepath.Join(dir, "out.npy")
		code, _, stderr := ndconvCLI(t, dir, append(append([]string{"correlate", "-q"}, args...), "in.npy", out)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		a, err := imageio.ReadNPYFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return a.Data.([]float32)
	}
	for alias, name := range map[string]string{
		"symmetric": "reflect", "grid-mirror": "reflect", "reflect101": "mirror", "reflect_101": "mirror",
		"edge": "nearest", "replicate": "nearest", "grid-wrap": "wrap", "grid-constant": "constant",
	} {
		got, want := read("-k", "k.csv", "--border", alias, "--cval", "3"), read("-k", "k.csv", "--border", name, "--cval", "3")
		if !slices.Equal(got, want) {
			t.Errorf("--border %s differs from %s", alias, name)
		}
	}
	if slices.Equal(read("-k", "k.csv", "--border", "edge"), read("-k", "k.csv", "--border", "wrap")) {
		t.Fatal("the border has no effect: the alias test cannot fail")
	}
	sep := read("-k", "outer:a.csv,b.npy", "--method", "separable")
	dense := read("-k", "ab.csv", "--method", "direct")
	for i := range sep {
		if d := math.Abs(float64(sep[i] - dense[i])); d > 1e-4*(1+math.Abs(float64(dense[i]))) {
			t.Fatalf("outer:a.csv,b.npy differs from the dense kernel at %d: %v vs %v", i, sep[i], dense[i])
		}
	}
	if !slices.Equal(read("-k", "k.csv", "--workers", "1"), read("-k", "k.csv", "--workers", "2")) {
		t.Error("--workers 1 and 2 differ")
	}
}

// TestNewDTypes: the CLI reads, filters and writes .npy of int8, uint32,
// int64, uint64 and float16 as the library does, converts to them with
// --dtype and reads them from .raw with --input-dtype.
func TestNewDTypes(t *testing.T) {
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "k.csv"), "0.5,-1,2\n1,0.25,-0.5\n")
	k := ndconv.NewKernel([]int{2, 3}, []float64{0.5, -1, 2, 1, 0.25, -0.5})
	for _, dt := range []nd.DType{nd.Int8, nd.Uint32, nd.Int64, nd.Uint64, nd.Float16} {
		in := ramp(dt, 7, 9)
		writeNPY(t, filepath.Join(dir, "in.npy"), in)
		for _, out := range []nd.DType{dt, nd.Float32, nd.Uint8} {
			code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "--border", "edge", "--dtype", out.String(), "in.npy", "out.npy")
			if code != 0 {
				t.Fatalf("%v -> %v: exit %d: %s", dt, out, code, stderr)
			}
			got, err := imageio.ReadNPYFile(filepath.Join(dir, "out.npy"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := ndconv.Correlate(context.Background(), in, ndconv.Options{Border: ndconv.Nearest, DType: out}, k)
			if err != nil {
				t.Fatal(err)
			}
			if got.DType() != out || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%v -> %v: the CLI's %v output differs from the library's", dt, out, got.DType())
			}
		}
		raw := filepath.Join(dir, "in.raw")
		if err := os.WriteFile(raw, in.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "--shape", "7,9", "--input-dtype", dt.String(), "in.raw", "out.npy")
		if code != 0 {
			t.Fatalf("raw %v: exit %d: %s", dt, code, stderr)
		}
		if got, err := imageio.ReadNPYFile(filepath.Join(dir, "out.npy")); err != nil || got.DType() != dt {
			t.Errorf("raw %v: read back %v, %v", dt, got.DType(), err)
		}
	}
}

func assertNoOutput(t *testing.T, dir, name string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == name || strings.HasPrefix(e.Name(), "."+name) {
			t.Errorf("%s left behind", e.Name())
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func TestDevicesVersionDemo(t *testing.T) {
	dir := t.TempDir()
	if code, out, _ := ndconvCLI(t, dir, "devices"); code != 0 || !strings.Contains(out, "cores") {
		t.Errorf("devices: exit %d, %q", code, out)
	}
	if code, out, _ := ndconvCLI(t, dir, "version"); code != 0 || !strings.HasPrefix(out, "ndconv ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	code, out, stderr := ndconvCLI(t, dir, "demo", "--out", "demo")
	if code != 0 {
		t.Fatalf("demo: exit %d, %s", code, stderr)
	}
	for _, name := range []string{"astronaut-gaussian.png", "astronaut-sobel-magnitude.npy", "astronaut-sobel-magnitude.png",
		"astronaut-gabor-bank.npy", "astronaut-gabor-bank.png", "brain-gaussian.nii.gz", "brain-gaussian.png", "brain-bank.npy", "brain-bank.png", "ecg-smooth.npy"} {
		if !strings.Contains(out, name) {
			t.Errorf("demo does not report %s", name)
		}
		a, _, err := imageio.ReadFile(filepath.Join(dir, "demo", name), imageio.RawOptions{})
		if err != nil {
			t.Errorf("demo output %s: %v", name, err)
			continue
		}
		// Every output must hold real results, not zeros.
		nonzero := false
		for _, v := range a.Float64s() {
			if v != 0 && !math.IsNaN(v) {
				nonzero = true
				break
			}
		}
		if !nonzero {
			t.Errorf("demo output %s is all zero", name)
		}
	}
}

// TestBench lists the workload sets, runs one small workload as JSON lines
// (no timing is checked, only the shape of the output), and refuses bad
// flags with a usage error.
func TestBench(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := ndconvCLI(t, dir, "bench", "--workload", "all", "--list")
	if code != 0 {
		t.Fatalf("bench --list: exit %d, %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 46+20+4 { // seeds, anchors, banks
		t.Errorf("bench --list printed %d workloads", len(lines))
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, `{"kind":"workload"`) {
			t.Fatalf("not a workload line: %s", line)
		}
	}
	code, out, stderr = ndconvCLI(t, dir, "bench", "--json", "--device", "cpu", "--shape", "64,48", "--kernel", "3x5", "--bank", "2", "--repeat", "3")
	if code != 0 {
		t.Fatalf("bench: exit %d, %s", code, stderr)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		kinds[v["kind"].(string)]++
		if v["kind"] == "result" && (v["ms_median"] == nil || v["method"] != "direct" || v["repeats"].(float64) != 3) {
			t.Errorf("result %s", line)
		}
	}
	if kinds["workload"] != 1 || kinds["roofline"] != 1 || kinds["result"] != 1 {
		t.Errorf("bench printed %v", kinds)
	}
	code, out, stderr = ndconvCLI(t, dir, "bench", "--device", "cpu", "--method", "fft", "--shape", "64,48", "--kernel", "9x9", "--repeat", "3")
	if code != 0 || !strings.Contains(out, " fft ") {
		t.Errorf("bench --method fft: exit %d, %q %q", code, out, stderr)
	}
	for _, args := range [][]string{
		{"bench", "--scale", "2"},
		{"bench", "--workload", "nonesuch"},
		{"bench", "--kernel", "3y3"},
		{"bench", "--dtype", "int16"},
		{"bench", "--only", "("},
		{"bench", "--device", "tpu"},
	} {
		if code, _, _ := ndconvCLI(t, dir, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// FuzzCommandLine feeds arbitrary argument lists to the parser: it must
// never panic, and must exit 0, 1 or 2. The filter job itself is not run.
func FuzzCommandLine(f *testing.F) {
	for _, seed := range []string{
		"correlate -k k.csv in.npy out.npy",
		"convolve -k a.npy -k b.npy --border constant --cval 2 --origin 1,-1 --mode full in.npy out.npy",
		"correlate --axes 2,0 --dtype uint8 --device cuda:1 --method separable -k x in.raw out.raw --shape 4,4 --input-dtype u2",
		"correlate --origin ,, -k",
		"correlate --cval NaN -k k in out",
		"devices", "version", "help correlate", "--bogus",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		if len(args) > 0 && (args[0] == "demo" || args[0] == "bench" || args[0] == "tune") {
			return // writes files, or measures the machine for seconds
		}
		noop := func(*cobra.Command, filterJob) error { return nil }
		code := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}, noop)
		if code < 0 || code > 2 {
			t.Fatalf("exit status %d", code)
		}
	})
}

// TestFormats filters the same image and volume from and into every file
// format with the built binary and compares each output with the library's
// result: exact for lossless formats, within JPEG's loss for .jpg.
func TestFormats(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	rgb, _ := nd.New(nd.Uint8, 12, 10, 3)
	for i := range rgb.Data.([]uint8) {
		y, x, c := i/30, i/3%10, i%3
		rgb.Data.([]uint8)[i] = uint8(40 + 6*y + 5*x + 30*c + (i*7)%5) // smooth, so JPEG loses little
	}
	vol, _ := nd.New(nd.Int16, 5, 6, 7)
	for i := range vol.Data.([]int16) {
		vol.Data.([]int16)[i] = int16((i*131)%900 - 300)
	}
	for _, tc := range []struct {
		name   string
		in     nd.Array
		inExt  string
		outExt string
		spec   string
		axes   []int // of the library call: a colour image's spatial axes
		lossy  bool
	}{
		{"png to png", rgb, ".png", ".png", "gaussian:sigma=1", []int{0, 1}, false},
		{"png to tif", rgb, ".png", ".tif", "sobel:axis=1", []int{0, 1}, false},
		{"png to npy", rgb, ".png", ".npy", "uniform:size=3", []int{0, 1}, false},
		{"png to jpg", rgb, ".png", ".jpg", "gaussian:sigma=1", []int{0, 1}, true},
		{"jpg to png", rgb, ".jpg", ".png", "gaussian:sigma=1", []int{0, 1}, true},
		{"tif to tiff", rgb, ".tif", ".tiff", "prewitt:axis=0", []int{0, 1}, false},
		{"tif volume", vol, ".tif", ".tif", "gaussian:sigma=1", nil, false},
		{"nii.gz volume", vol, ".nii.gz", ".nii.gz", "log:sigma=1", nil, false},
		{"nii to npy", vol, ".nii", ".npy", "laplace", nil, false},
		{"npy to nii", vol, ".npy", ".nii", "scharr:axis=2", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+"-in"+tc.inExt)
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+"-out"+tc.outExt)
			if err := imageio.WriteFile(in, tc.in, imageio.WriteOptions{Meta: imageio.Meta{Channels: channelsOf(tc.in)}}); err != nil {
				t.Fatal(err)
			}
			src, _, err := imageio.ReadFile(in, imageio.RawOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", tc.spec, in, out); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, _, err := imageio.ReadFile(out, imageio.RawOptions{})
			if err != nil {
				t.Fatal(err)
			}
			named, err := filters.Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ndconv.Filter(ctx, src, ndconv.Options{Axes: tc.axes}, named)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Shape, want.Shape) {
				t.Fatalf("shape %v, want %v", got.Shape, want.Shape)
			}
			g, w := got.Float64s(), want.Float64s()
			for i := range g {
				if d := math.Abs(g[i] - w[i]); d > 0 && !tc.lossy || d > 12 {
					t.Fatalf("value %d is %v, want %v", i, g[i], w[i])
				}
			}
		})
	}
}

func channelsOf(a nd.Array) int {
	if len(a.Shape) == 3 && a.Shape[2] <= 4 && a.DType() == nd.Uint8 {
		return a.Shape[2]
	}
	return 0
}

// cliTags are the build tags of the ndconv binaries the tests build: this
// test binary's own that change the CLI (noasm_test.go).
var cliTags []string
