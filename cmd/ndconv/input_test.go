package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestRawFlagsOnlyForRaw: --shape and --input-dtype with an input that
// describes itself (.npy, .png, …) are a usage error naming the flag; they
// were silently ignored.
func TestRawFlagsOnlyForRaw(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 6, 7))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n")
	for _, args := range [][]string{
		{"--shape", "6,7"},
		{"--input-dtype", "float32"},
		{"--shape", "42", "--input-dtype", "uint8"},
	} {
		code, _, stderr := ndconvCLI(t, dir, append(append([]string{"correlate", "-k", "k.csv"}, args...), "in.npy", "out.npy")...)
		if code != 2 || !strings.Contains(stderr, args[0]+" is for a .raw input") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", args, code, stderr, args[0])
		}
		assertNoOutput(t, dir, "out.npy")
	}
	// Without them the same command runs.
	if code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "in.npy", "out.npy"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestCValNaN: --cval nan is passed to the library, which judges it for
// every entry point (the CLI refused it on its own while accepting inf).
// Where the library takes a NaN cval (scipy's meaning: NaN in the outputs
// whose nonzero taps reach the border), the output is internal/ref's;
// where it refuses one, the refusal is one line. ±inf runs, as it did.
func TestCValNaN(t *testing.T) {
	dir := t.TempDir()
	in := ramp(nd.Float32, 6, 7)
	writeNPY(t, filepath.Join(dir, "in.npy"), in)
	k := nd.Kernel{Shape: []int{3, 3}, Weights: []float64{0, 1, 0, 2, 0, 0, 0, 0, 0.5}}
	writeNPY(t, filepath.Join(dir, "k.npy"), nd.Array{Shape: k.Shape, Data: k.Weights})
	for _, v := range []string{"nan", "NaN", "-nan", "inf", "-inf"} {
		cval, _ := imageio.ParseComplex(v)
		c := enginetest.Case{Spec: nd.Spec{Shape: in.Shape, In: in.DType(), Kernels: []nd.Kernel{k}, Border: nd.Constant, CVal: real(cval)}, Input: in}
		_, refused := c.Spec.Normalize()
		code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.npy", "--border", "constant", "--cval", v, "in.npy", "out.npy")
		if refused != nil {
			if code != 1 || !strings.Contains(stderr, "cval") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("--cval %s (the library refuses it): exit %d, stderr %q; want 1 and one line", v, code, stderr)
			}
			assertNoOutput(t, dir, "out.npy")
			continue
		}
		if code != 0 {
			t.Errorf("--cval %s: exit %d: %s", v, code, stderr)
			continue
		}
		got, err := imageio.ReadNPYFile(filepath.Join(dir, "out.npy"))
		if err != nil {
			t.Fatal(err)
		}
		if msg := c.Check(got, c.Want()); msg != "" {
			t.Errorf("--cval %s: %s", v, msg)
		}
	}
}

// TestOutputThroughLink: an output path that is a symbolic link is written
// through, whole and streamed: the link stays, its target (in another
// directory) gets the result, and no temporary file is left in either
// directory. The link used to be replaced by a regular file.
func TestOutputThroughLink(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	os.Mkdir(store, 0o755)
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 30, 20))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n")
	code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "in.npy", "plain.npy")
	if code != 0 {
		t.Fatal(stderr)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "plain.npy"))
	for _, env := range [][]string{nil, {"NDCONV_STREAM_THRESHOLD=1", "NDCONV_STREAM_CHUNK=512"}} {
		os.WriteFile(filepath.Join(store, "real.npy"), []byte("old"), 0o644)
		os.Remove(filepath.Join(dir, "out.npy"))
		if err := os.Symlink("store/real.npy", filepath.Join(dir, "out.npy")); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		if code, _ := runWithEnv(t, dir, env, "correlate", "-q", "-k", "k.csv", "in.npy", "out.npy"); code != 0 {
			t.Fatalf("%v: exit %d", env, code)
		}
		if fi, err := os.Lstat(filepath.Join(dir, "out.npy")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%v: out.npy is no longer a link (%v)", env, err)
		}
		if got, _ := os.ReadFile(filepath.Join(store, "real.npy")); !bytes.Equal(got, want) {
			t.Errorf("%v: the link's target does not hold the result", env)
		}
		for _, d := range []string{dir, store} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("%v: %s left in %s", env, e.Name(), d)
				}
			}
		}
	}
	if _, err := imageio.ReadNPYFile(filepath.Join(dir, "out.npy")); err != nil {
		t.Error(err)
	}
}
