package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// propertyCases is how many random valid command lines TestCLIProperties
// runs (and half as many malformed ones): 200 and 100 by default, 3–5 s
// on 2 busy cores; NDCONV_CLI_CASES sets it.
func propertyCases() int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_CLI_CASES")); err == nil && n > 0 {
		return n
	}
	return 200
}

// cliRun runs the CLI's entry point in-process: exit status, stdout and
// the stderr lines.
func cliRun(args ...string) (int, string, []string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr, runFilter)
	var lines []string
	if s := strings.TrimRight(stderr.String(), "\n"); s != "" {
		lines = strings.Split(s, "\n")
	}
	return code, stdout.String(), lines
}

// libraryTakesEmpty reports whether the library runs a problem with an
// axis of length 0 (the planner's fix of issue 34 item 2): until it does,
// the CLI's zero-length cases end in a recovered panic, which the property
// test logs instead of failing on.
func libraryTakesEmpty() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	for _, shape := range [][]int{{0}, {4, 0}} {
		p, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Float32, ndconv.Options{Device: "cpu"}, ndconv.NewKernel([]int{3}, []float64{1, 2, 3}))
		if err != nil {
			return false
		}
		a, _ := nd.New(nd.Float32, shape...)
		if _, err := p.Execute(context.Background(), ndconv.Array{}, a); err != nil {
			return false
		}
	}
	return true
}

// TestCLIProperties runs the CLI entry point on random command lines.
// Valid ones — 1–3-D inputs of every real dtype, sometimes with an axis of
// length 0, banks of 1 to 20 kernels from .npy files or outer: factor
// files, every border, mode, origins, axes, output dtypes, correlate and
// convolve, under --exact — must exit 0 with internal/ref's result within
// the engines' tolerance (enginetest.Case.Check), or fail with one line
// exactly where nd.Spec refuses the request. Malformed ones — bad flags,
// bad kernel files and specs — must exit 1 or 2 with one stderr line that
// is not an internal error. No case may leave an output or a temporary
// file it should not.
func TestCLIProperties(t *testing.T) {
	n := propertyCases()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(34, uint64(n)))
	strictEmpty := libraryTakesEmpty()
	start := time.Now()
	var valid, refused, empty int
	emptyOutcomes := map[string]int{}
	for i := range n {
		c, args, err := randomCLICase(t, rng, dir, i)
		out := filepath.Join(dir, fmt.Sprintf("out%d.npy", i))
		code, _, lines := cliRun(append(args, out)...)
		line := strings.Join(lines, " | ")
		what := fmt.Sprintf("case %d: ndconv %s (%s)", i, strings.Join(args, " "), c.Name)
		if len(lines) > 1 || code != 0 && len(lines) != 1 {
			t.Errorf("%s: exit %d, stderr %q: want one line on failure, none on success", what, code, lines)
		}
		isEmpty := false
		for _, s := range c.Input.Shape {
			isEmpty = isEmpty || s == 0
		}
		if isEmpty {
			empty++
			outcome := fmt.Sprintf("exit %d", code)
			if code != 0 {
				outcome += ": " + firstWords(line, 6)
			}
			emptyOutcomes[outcome]++
			if strings.Contains(line, "internal error") && strictEmpty {
				t.Errorf("%s: %s", what, line)
			}
			if code == 0 {
				checkEmptyOutput(t, what, c, out)
			} else {
				assertNoFile(t, what, out)
			}
			continue
		}
		if err != nil {
			refused++
			if code == 0 || strings.Contains(line, "internal error") {
				t.Errorf("%s: exit %d (%s); nd.Spec refuses it: %v", what, code, line, err)
			}
			assertNoFile(t, what, out)
			continue
		}
		valid++
		if code != 0 {
			t.Errorf("%s: exit %d: %s", what, code, line)
			continue
		}
		got, rerr := imageio.ReadNPYFile(out)
		if rerr != nil {
			t.Errorf("%s: %v", what, rerr)
			continue
		}
		if msg := c.Check(got, c.Want()); msg != "" {
			t.Errorf("%s: %s", what, msg)
		}
		os.Remove(out)
	}
	malformed := n / 2
	for i := range malformed {
		args := randomMalformed(t, rng, dir, i)
		out := filepath.Join(dir, fmt.Sprintf("bad%d.npy", i))
		code, _, lines := cliRun(append(args, out)...)
		if (code != 1 && code != 2) || len(lines) != 1 || strings.Contains(lines[0], "internal error") {
			t.Errorf("malformed %d: ndconv %q: exit %d, stderr %q; want 1 or 2 and one line", i, args, code, lines)
		}
		assertNoFile(t, fmt.Sprintf("malformed %d", i), out)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	t.Logf("%d random command lines in %.1f s: %d compared with internal/ref, %d refused as nd.Spec refuses them, %d with a zero-length axis (%v; library runs empty arrays: %v); %d malformed",
		n+malformed, time.Since(start).Seconds(), valid, refused, empty, emptyOutcomes, strictEmpty, malformed)
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

func assertNoFile(t *testing.T, what, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s: failed but left %s", what, filepath.Base(path))
		os.Remove(path)
	}
}

// checkEmptyOutput: an empty result has no elements, the input's rank (and
// the bank's axis), and the input's length on every axis the kernel does
// not span.
func checkEmptyOutput(t *testing.T, what string, c enginetest.Case, out string) {
	t.Helper()
	got, err := imageio.ReadNPYFile(out)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	os.Remove(out)
	rank := len(c.Input.Shape)
	if len(c.Spec.Kernels) > 1 {
		rank++
	}
	if len(got.Shape) != rank || got.Len() != 0 {
		t.Errorf("%s: output shape %v for input %v: want an empty array of rank %d", what, got.Shape, c.Input.Shape, rank)
		return
	}
	spanned := map[int]bool{}
	for _, a := range c.Spec.Axes {
		spanned[a] = true
	}
	for a, s := range c.Input.Shape {
		if !spanned[a] && got.Shape[a] != s {
			t.Errorf("%s: output shape %v for input %v: axis %d changed", what, got.Shape, c.Input.Shape, a)
		}
	}
}

var (
	borderNames = []string{"reflect", "mirror", "nearest", "wrap", "constant"}
	modeNames   = []string{"same", "valid", "full"}
)

// randomCLICase writes a random input and kernels under dir and returns
// the case, the command line (less the output) and nd.Spec's verdict on it.
func randomCLICase(t *testing.T, rng *rand.Rand, dir string, i int) (enginetest.Case, []string, error) {
	t.Helper()
	rank := 1 + rng.IntN(3)
	shape := make([]int, rank)
	for d := range shape {
		shape[d] = 1 + rng.IntN([]int{40, 12, 7}[rank-1])
	}
	if rng.IntN(10) == 0 {
		shape[rng.IntN(rank)] = 0
	}
	krank := 1 + rng.IntN(rank)
	kshape := make([]int, krank)
	for d := range kshape {
		kshape[d] = 1 + rng.IntN(5)
	}
	axes := rng.Perm(rank)[:krank]
	bank := 1
	if rng.IntN(2) == 0 {
		bank = 2 + rng.IntN(19)
	}
	args := []string{"correlate", "-q", "--exact", "--device", "cpu"}
	s := nd.Spec{Axes: axes, Border: nd.Border(rng.IntN(5)), Mode: nd.Mode(rng.IntN(3))}
	if rng.IntN(2) == 0 {
		args[0] = "convolve"
		s.Convolve = true
	}
	for k := range bank {
		if rng.IntN(4) == 0 {
			kern := enginetest.RandomFactors(rng, kshape...)
			var files []string
			for d, f := range kern.Factors {
				name := filepath.Join(dir, fmt.Sprintf("k%d-%d-f%d.npy", i, k, d))
				writeNPY(t, name, nd.Array{Shape: []int{len(f)}, Data: f})
				files = append(files, name)
			}
			args = append(args, "-k", "outer:"+strings.Join(files, ","))
			s.Kernels = append(s.Kernels, kern)
			continue
		}
		kern := enginetest.RandomKernel(rng, true, kshape...)
		name := filepath.Join(dir, fmt.Sprintf("k%d-%d.npy", i, k))
		writeNPY(t, name, nd.Array{Shape: kern.Shape, Data: kern.Weights})
		args = append(args, "-k", name)
		s.Kernels = append(s.Kernels, kern)
	}
	args = append(args, "--border", borderNames[s.Border], "--mode", modeNames[s.Mode], "--axes", joinInts(axes))
	if s.Border == nd.Constant {
		s.CVal = float64(rng.IntN(200)-100) / 8
		if rng.IntN(8) == 0 {
			s.CVal = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
		}
		args = append(args, "--cval", strconv.FormatFloat(s.CVal, 'g', -1, 64))
	}
	if rng.IntN(2) == 0 {
		origin := make([]int, krank)
		for d, k := range kshape {
			origin[d] = rng.IntN(k) - k/2
		}
		s.Origin = origin
		args = append(args, "--origin", joinInts(origin))
	}
	if rng.IntN(2) == 0 {
		s.Out = nd.DTypes[rng.IntN(len(nd.DTypes))]
		args = append(args, "--dtype", s.Out.String())
	}
	in := enginetest.RandomArray(rng, nd.DTypes[rng.IntN(len(nd.DTypes))], shape...)
	s.Shape, s.In = in.Shape, in.DType()
	name := filepath.Join(dir, fmt.Sprintf("in%d.npy", i))
	writeNPY(t, name, in)
	args = append(args, name)
	c := enginetest.Case{Name: fmt.Sprintf("%v%v k%v×%d", in.DType(), shape, kshape, bank), Spec: s, Input: in}
	_, err := s.Normalize()
	return c, args, err
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// randomMalformed returns a command line (less the output) with one thing
// wrong: a flag's value, an unknown flag, a kernel file or spec.
func randomMalformed(t *testing.T, rng *rand.Rand, dir string, i int) []string {
	t.Helper()
	in := filepath.Join(dir, "bad-in.npy")
	if _, err := os.Stat(in); err != nil {
		writeNPY(t, in, ramp(nd.Float32, 9, 8))
		writeText(t, filepath.Join(dir, "bad-good.csv"), "1,2,1\n")
	}
	good := filepath.Join(dir, "bad-good.csv")
	flags := [][]string{
		{"--border", "circular"}, {"--mode", "half"}, {"--origin", "a"}, {"--origin", "9"}, {"--axes", "5"},
		{"--axes", "0,0"}, {"--dtype", "float128"}, {"--cval", "1..2"}, {"--cval", "nan+"}, {"--workers", "-3"},
		{"--method", "magic"}, {"--device", "tpu"}, {"--quality", "0"}, {"--png-compression", "10"}, {"--bogus"}, {"--gabor-bank", "-1"},
		{"--shape", "9,8"}, {"--input-dtype", "uint8"}, {"--compression", "zip"}, {"--device-memory", "-1G"},
		{"-k", "gaussian:sigma=-1"}, {"-k", "nosuch:x=1"}, {"-k", "uniform:size=0"}, {"-k", "gaussian:sigma=1e5"},
		{"-k", "sobel:axis=7"}, {"-k", "outer:"}, {"-k", filepath.Join(dir, "missing.csv")},
		{"--mode", "valid", "-k", "uniform:size=20"},
	}
	texts := []string{"1,,3", "1;2;3", "1,2,3,", "", "# only a comment\n", "abc", "1,2\n3", "1 2\n3,4", "nan,1",
		"inf", "1e999", "0x10", "1_0", ",", "(1+2j", "1 + 2j", "1,2\n\n3,4,5"}
	args := []string{"correlate", "-q"}
	switch rng.IntN(4) {
	case 0, 1:
		args = append(append(args, "-k", good), flags[rng.IntN(len(flags))]...)
	case 2:
		name := filepath.Join(dir, fmt.Sprintf("badk%d.csv", i))
		text := texts[rng.IntN(len(texts))]
		if rng.IntN(3) == 0 {
			// Random bytes after an @: a line that is surely no table
			// (a # in them starts a comment after the @).
			b := make([]byte, 1+rng.IntN(12))
			for j := range b {
				const alphabet = "0123456789,;. \t\n#ej+-x"
				b[j] = alphabet[rng.IntN(len(alphabet))]
			}
			text = "1,2,3\n@" + string(b)
		}
		writeText(t, name, text)
		args = append(args, "-k", name)
	default:
		name := filepath.Join(dir, fmt.Sprintf("badk%d.npy", i))
		var b bytes.Buffer
		imageio.WriteNPY(&b, ramp(nd.Float64, 3))
		data := b.Bytes()
		switch rng.IntN(3) {
		case 0:
			data = data[:rng.IntN(len(data))] // truncated
		case 1:
			data[rng.IntN(10)] ^= 0xff // a broken magic or version
		default:
			imageio.WriteNPY(&b, nd.Array{Shape: []int{}, Data: []float64{1}})
			data = b.Bytes()[len(data):] // 0-D
		}
		os.WriteFile(name, data, 0o644)
		args = append(args, "-k", name)
	}
	return append(args, in)
}
