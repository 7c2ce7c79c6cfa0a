package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// manyFolder makes in/ with good files of two shapes and three formats, a
// PNG with a bad signature, a dangling link with a readable extension, a
// file of no readable format (ignored) and sub/d.png (taken with
// --recursive). It returns the names, in name order, of the good files at
// the top.
func manyFolder(t *testing.T, dir string) []string {
	t.Helper()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(filepath.Join(in, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]nd.Array{
		"a.png":     ramp(nd.Uint8, 20, 30),
		"b.png":     ramp(nd.Uint8, 20, 30),
		"c.npy":     ramp(nd.Float32, 12, 14),
		"e.tif":     ramp(nd.Uint16, 9, 11),
		"sub/d.png": ramp(nd.Uint8, 16, 17),
	} {
		if name == "b.png" {
			nd.Store(a.Data, 0, 1, []float64{255, 0, 7}) // unlike a.png
		}
		if err := imageio.WriteFile(filepath.Join(in, name), a, imageio.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	writeText(t, filepath.Join(in, "bad.png"), "not a PNG at all, just text")
	if err := os.Symlink(filepath.Join(in, "missing.npy"), filepath.Join(in, "dangling.npy")); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(in, "notes.md"), "not an input")
	return []string{"a.png", "b.png", "c.npy", "e.tif"}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oneFileOutput runs the one-file form on in/rel and returns the output's
// bytes.
func oneFileOutput(t *testing.T, dir, rel, outName string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(dir, "single-"+strings.ReplaceAll(outName, "/", "_"))
	code, _, stderr := ndconvCLI(t, dir, append(append([]string{"correlate"}, args...), filepath.Join("in", rel), out)...)
	if code != 0 {
		t.Fatalf("one-file %s: exit %d: %s", rel, code, stderr)
	}
	return readBytes(t, out)
}

// TestManyFolder: a folder run filters every good file exactly as a
// one-file call does (byte for byte, two shapes, three formats), reports the
// corrupt and the unreadable file by name on one line each, skips them,
// finishes the others, exits 1 and prints a summary.
func TestManyFolder(t *testing.T) {
	dir := t.TempDir()
	good := manyFolder(t, dir)
	k := []string{"-k", "gaussian:sigma=1", "--border", "nearest"}
	code, stdout, stderr := ndconvCLI(t, dir, append([]string{"correlate"}, append(k, "in", "--out-dir", "out")...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (two files failed): %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "bad.png") || !strings.Contains(lines[1], "dangling.npy") ||
		!strings.Contains(lines[2], "2 of 6 files failed") {
		t.Errorf("stderr, want one line per failed file and a count:\n%s", stderr)
	}
	if !strings.Contains(stdout, "6 files, 2 failed, 0 skipped") || !strings.Contains(stdout, "files/s") ||
		!strings.Contains(stdout, "MB/s in") || !strings.Contains(stdout, "; read ") || !strings.Contains(stdout, ", compute ") {
		t.Errorf("summary: %q", stdout)
	}
	for _, name := range good {
		got := readBytes(t, filepath.Join(dir, "out", name))
		if want := oneFileOutput(t, dir, name, name, k...); !bytes.Equal(got, want) {
			t.Errorf("%s: the folder run's output differs from a one-file call's", name)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(entries) != len(good) {
		t.Errorf("out/ holds %d entries, want the %d good files only (no partial or temporary files, no sub/)", len(entries), len(good))
	}

	// --skip-existing resumes: an existing output is kept, a missing one made.
	sentinel := []byte("kept")
	if err := os.WriteFile(filepath.Join(dir, "out", "a.png"), sentinel, 0o644); err != nil {
		t.Fatal(err)
	}
	want := readBytes(t, filepath.Join(dir, "out", "b.png"))
	os.Remove(filepath.Join(dir, "out", "b.png"))
	code, stdout, _ = ndconvCLI(t, dir, append([]string{"correlate"}, append(k, "in", "--out-dir", "out", "--skip-existing")...)...)
	if code != 1 || !strings.Contains(stdout, "6 files, 2 failed, 3 skipped") {
		t.Errorf("--skip-existing: exit %d, summary %q", code, stdout)
	}
	if !bytes.Equal(readBytes(t, filepath.Join(dir, "out", "a.png")), sentinel) {
		t.Error("--skip-existing rewrote an existing output")
	}
	if !bytes.Equal(readBytes(t, filepath.Join(dir, "out", "b.png")), want) {
		t.Error("--skip-existing did not remake the missing output")
	}

	// -q: no summary; all good files: exit 0.
	code, stdout, stderr = ndconvCLI(t, dir, append([]string{"correlate", "-q"}, append(k, "in/a.png", "in/c.npy", "--out-dir", "out2")...)...)
	if code != 0 || stdout != "" || stderr != "" {
		t.Errorf("two good files with -q: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestManyFailFast: --fail-fast stops at the first failed file (bad.png,
// third in name order): the files before it are written, those after not.
func TestManyFailFast(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	code, _, stderr := ndconvCLI(t, dir, "correlate", "-k", "uniform:size=3", "in", "--out-dir", "out", "--fail-fast")
	if code != 1 || !strings.Contains(stderr, "bad.png") || strings.Contains(stderr, "dangling") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for name, want := range map[string]bool{"a.png": true, "b.png": true, "c.npy": false, "e.tif": false} {
		if _, err := os.Stat(filepath.Join(dir, "out", name)); (err == nil) != want {
			t.Errorf("%s written: %v, want %v", name, err == nil, want)
		}
	}
}

// TestManyRecursiveOutName: --recursive keeps the relative path under the
// output directory, --out-name names the outputs and its extension picks
// the format; the outputs equal one-file calls'.
func TestManyRecursiveOutName(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	os.Remove(filepath.Join(dir, "in", "bad.png"))
	os.Remove(filepath.Join(dir, "in", "dangling.npy"))
	k := []string{"-k", "sobel:axis=0"}
	code, _, stderr := ndconvCLI(t, dir, append([]string{"correlate"}, append(k, "in", "--out-dir", "out", "--recursive", "--out-name", "{stem}-blur{ext}")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for in, out := range map[string]string{"a.png": "a-blur.png", "sub/d.png": "sub/d-blur.png", "e.tif": "e-blur.tif"} {
		got := readBytes(t, filepath.Join(dir, "out", out))
		if want := oneFileOutput(t, dir, in, out, k...); !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from a one-file call's", out)
		}
	}
	// The format follows the template's extension; {i} and {dir} fill in.
	code, _, stderr = ndconvCLI(t, dir, append([]string{"convolve"}, append(k, "in", "--out-dir", "npy", "--recursive", "--out-name", "{dir}/{i}-{name}.npy")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := imageio.ReadNPYFile(filepath.Join(dir, "npy", "sub", "4-d.png.npy"))
	if err != nil || got.DType() != nd.Uint8 {
		t.Fatalf("sub/4-d.png.npy: %v %v", err, got.DType())
	}
	if _, err := os.Stat(filepath.Join(dir, "npy", "0-a.png.npy")); err != nil {
		t.Error(err)
	}
}

// TestManyUsage: the one-file form is unchanged without --out-dir; the
// many-file flags need it; templates and clashing names are refused before
// any work (exit 2).
func TestManyUsage(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"in/a.png", "in/b.png", "in/c.npy"}, "accepts 2 arg"},
		{[]string{"in/a.png", "o.png", "--skip-existing"}, "--skip-existing is for many inputs"},
		{[]string{"in", "--out-dir", "o", "--out-name", "{bad}.png"}, "fields are"},
		{[]string{"in", "--out-dir", "o", "--out-name", "x{ext}"}, "would both be written"},
		{[]string{"in", "--out-dir", "o", "--out-name", "{stem}.bmp"}, "no known format"},
		{[]string{"in", "--out-dir", "in"}, "overwrite its input"},
		{[]string{"in", "--out-dir", "o", "--shape", "4,4"}, ".raw inputs"},
		{[]string{"in/a.png", "in/notes.md", "--out-dir", "o"}, "notes.md: not a file format"},
	} {
		code, _, stderr := ndconvCLI(t, dir, append([]string{"correlate", "-k", "laplace"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// With --out-dir, two positional arguments are two inputs.
	code, _, stderr := ndconvCLI(t, dir, "correlate", "-k", "laplace", "in/a.png", "in/c.npy", "--out-dir", "two")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"a.png", "c.npy"} {
		if _, err := os.Stat(filepath.Join(dir, "two", name)); err != nil {
			t.Error(err)
		}
	}
}

// TestManyPlansPerShape: a folder of four good files of three shapes and
// dtypes is planned three times (a.png and b.png share one plan).
func TestManyPlansPerShape(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	code, _, notes, lines := runHooked(t, dir, "correlate", "-k", "laplace", "--device", "cpu", "in", "--out-dir", "out")
	if code != 1 || len(lines) != 3 {
		t.Fatalf("exit %d, stderr %q", code, lines)
	}
	var plans []string
	for _, n := range notes {
		if strings.HasPrefix(n, "plan ") {
			plans = append(plans, n)
		}
	}
	want := []string{"plan [20 30] uint8 0", "plan [12 14] float32 0", "plan [9 11] uint16 0"}
	if strings.Join(plans, "|") != strings.Join(want, "|") {
		t.Errorf("plans made %q, want %q", plans, want)
	}
}

// TestManyFromStdinAndGlob: --from - reads inputs from standard input, one
// a line, and a quoted glob expands in ndconv; both give the one-file
// outputs.
func TestManyFromStdinAndGlob(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	cmd := exec.Command(binaryPath, "correlate", "-q", "-k", "laplace", "--from", "-", "--out-dir", "listed")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("in/c.npy\n\nin/sub/d.png\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("--from -: %v: %s", err, out)
	}
	for _, name := range []string{"c.npy", "d.png"} {
		rel := map[string]string{"c.npy": "c.npy", "d.png": "sub/d.png"}[name]
		if got, want := readBytes(t, filepath.Join(dir, "listed", name)), oneFileOutput(t, dir, rel, name, "-k", "laplace"); !bytes.Equal(got, want) {
			t.Errorf("--from: %s differs from a one-file call's output", name)
		}
	}
	code, stdout, stderr := ndconvCLI(t, dir, "correlate", "-k", "laplace", "in/[ab].png", "--out-dir", "globbed")
	if code != 0 || !strings.Contains(stdout, "2 files, 0 failed") {
		t.Fatalf("glob: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = ndconvCLI(t, dir, "correlate", "-k", "laplace", "in/*.jpg", "--out-dir", "none")
	if code != 2 || !strings.Contains(stderr, "no file matches") {
		t.Errorf("a glob matching nothing: exit %d, stderr %q", code, stderr)
	}
}

// TestManyCeiling: --ceiling runs the folder through the same pipeline,
// reading and writing every file but filtering none: each output holds
// its input's samples as written by the output's encoder, the summary
// says so, and -k is not needed.
func TestManyCeiling(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	os.Remove(filepath.Join(dir, "in", "bad.png"))
	os.Remove(filepath.Join(dir, "in", "dangling.npy"))
	code, stdout, stderr := ndconvCLI(t, dir, "correlate", "--ceiling", "in", "--out-dir", "out", "--recursive")
	if code != 0 || !strings.Contains(stdout, "ceiling: 5 files, 0 failed") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, name := range []string{"a.png", "b.png", "c.npy", "e.tif", "sub/d.png"} {
		in, _, err := imageio.ReadFile(filepath.Join(dir, "in", name), imageio.RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := imageio.ReadFile(filepath.Join(dir, "out", name), imageio.RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(in.Bytes(), out.Bytes()) || in.DType() != out.DType() || !slices.Equal(in.Shape, out.Shape) {
			t.Errorf("%s: the ceiling's output is not its input", name)
		}
	}
	code, _, stderr = ndconvCLI(t, dir, "correlate", "--ceiling", "in/a.png", "o.png")
	if code != 2 || !strings.Contains(stderr, "--ceiling is for many inputs") {
		t.Errorf("--ceiling without --out-dir: exit %d, stderr %q", code, stderr)
	}
}

// TestManyOneCorePlans: on 4 cores, a folder of small images of one shape
// is computed on one-core plans of the compute workers' own, beside the
// run's plan (the one-file call's, made first), and every output still
// equals the one-file call's byte for byte: for a 7×7 kernel file and a
// filter of several terms, uint8 and float32.
func TestManyOneCorePlans(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 4 {
		a := ramp(nd.Uint8, 23, 31)
		nd.Store(a.Data, 0, 1, []float64{float64(40 * i), float64(255 - 9*i), float64(i)})
		name := "p" + string(rune('a'+i)) + ".png"
		if err := imageio.WriteFile(filepath.Join(in, name), a, imageio.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	writeNPY(t, filepath.Join(in, "v.npy"), ramp(nd.Float32, 9, 10, 11))
	names = append(names, "v.npy")
	k7 := ramp(nd.Float32, 7, 7)
	writeNPY(t, filepath.Join(dir, "k7.npy"), k7)
	for _, k := range [][]string{
		{"-k", "k7.npy", "--border", "mirror"},
		{"-k", "gaussian-gradient-magnitude:sigma=1"},
	} {
		out := "out-" + strings.Split(k[1], ":")[0]
		code, _, notes, lines := runHookedEnv(t, dir, []string{"GOMAXPROCS=4"},
			append(append([]string{"correlate", "--device", "cpu"}, k...), "in", "--out-dir", out)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %q", k, code, lines)
		}
		var plans, oneCore int
		for _, n := range notes {
			plans += b2i(strings.HasPrefix(n, "plan "))
			oneCore += b2i(strings.HasPrefix(n, "one-core plan [23 31] uint8"))
		}
		if plans != 2 || oneCore == 0 || oneCore > 2 {
			t.Errorf("%v: %d run plans (want 2) and %d one-core plans for the PNGs (want 1 or 2, one a worker): %q", k, plans, oneCore, notes)
		}
		for _, name := range names {
			got := readBytes(t, filepath.Join(dir, out, name))
			if want := oneFileOutput(t, dir, name, out+name, append([]string{"--device", "cpu"}, k...)...); !bytes.Equal(got, want) {
				t.Errorf("%v: %s differs from a one-file call's output", k, name)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestManyBanks: small files of one kind waiting for the device together
// run as one bank (an array with a leading bank axis the kernels do not
// span); NDCONV_TESTHOOK_BANK_CPU makes the CPU bank as a GPU does (and
// hold the "device" 100 ms a bank, so that files queue for it), so that
// this runs where no GPU is. Every output equals the one without banks
// byte for byte, and a one-file call's: gray and RGB PNGs, a 7×7 kernel
// file (spanning the first axes by default) and a named filter of several
// terms (spanning the axes but the colour's, named by the CLI).
func TestManyBanks(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 10 {
		a := ramp(nd.Uint8, 23, 31)
		if i%3 == 2 {
			a = ramp(nd.Uint8, 19, 17, 3)
		}
		nd.Store(a.Data, 0, 1, []float64{float64(40 * i), float64(255 - 9*i), float64(i)})
		name := fmt.Sprintf("p%02d.png", i)
		if err := imageio.WriteFile(filepath.Join(in, name), a, imageio.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	writeNPY(t, filepath.Join(dir, "k7.npy"), ramp(nd.Float32, 7, 7))
	for _, k := range [][]string{
		{"-k", "k7.npy", "--border", "mirror"},
		{"-k", "gaussian-gradient-magnitude:sigma=1"},
	} {
		tag := strings.ReplaceAll(strings.Split(k[1], ":")[0], ".", "")
		args := append(append([]string{"correlate", "--device", "cpu"}, k...), "in", "--out-dir")
		code, _, notes, lines := runHookedEnv(t, dir, []string{"GOMAXPROCS=8", "NDCONV_TESTHOOK_BANK_CPU=1"}, append(args, "banked-"+tag)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %q", k, code, lines)
		}
		if countNotes(notes, "bank plan ") == 0 {
			t.Errorf("%v: no bank plan made: %q", k, notes)
		}
		code, _, _, lines = runHookedEnv(t, dir, []string{"GOMAXPROCS=1"}, append(args, "alone-"+tag)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %q", k, code, lines)
		}
		// Files above the bank limit run alone on the "device", their
		// outputs allocated ahead (executeAlone).
		code, _, notes, lines = runHookedEnv(t, dir, []string{"GOMAXPROCS=8", "NDCONV_TESTHOOK_BANK_CPU=1", "NDCONV_TESTHOOK_BANK_FILE_MAX=1"}, append(args, "big-"+tag)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %q", k, code, lines)
		}
		if n := countNotes(notes, "device alone"); n != len(names) {
			t.Errorf("%v: %d files ran alone on the device, want %d: %q", k, n, len(names), notes)
		}
		// Each "device" execution takes 100 ms (testHookDeviceBusy), so
		// files queue for it, and more plans are made to run them at once.
		perKind := map[string]int{}
		for _, n := range notes {
			if kind, ok := strings.CutPrefix(n, "alone plan "); ok {
				perKind[kind]++
			}
		}
		for kind, n := range perKind {
			if n > aloneMax-1 {
				t.Errorf("%v: %d more plans for files of %s alone, want at most %d", k, n, kind, aloneMax-1)
			}
		}
		if len(perKind) == 0 {
			t.Errorf("%v: no more plans for files alone: %q", k, notes)
		}
		for _, name := range names {
			alone := readBytes(t, filepath.Join(dir, "alone-"+tag, name))
			if !bytes.Equal(readBytes(t, filepath.Join(dir, "banked-"+tag, name)), alone) {
				t.Errorf("%v: %s banked differs from %s alone", k, name, name)
			}
			if !bytes.Equal(readBytes(t, filepath.Join(dir, "big-"+tag, name)), alone) {
				t.Errorf("%v: %s run alone on the device differs from %s alone", k, name, name)
			}
		}
		for _, name := range []string{"p01.png", "p02.png"} { // gray, RGB
			got := readBytes(t, filepath.Join(dir, "banked-"+tag, name))
			if want := oneFileOutput(t, dir, name, tag+name, append([]string{"--device", "cpu"}, k...)...); !bytes.Equal(got, want) {
				t.Errorf("%v: %s differs from a one-file call's output", k, name)
			}
		}
	}
}

// countNotes counts the test hook's notes that start with prefix.
func countNotes(notes []string, prefix string) int {
	n := 0
	for _, s := range notes {
		n += b2i(strings.HasPrefix(s, prefix))
	}
	return n
}
