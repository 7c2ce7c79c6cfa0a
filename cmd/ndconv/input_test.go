package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
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

// TestCValNaN: --cval nan is one clear usage line (the library refuses a
// NaN cval on every entry point); ±inf runs, as it did.
func TestCValNaN(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 6, 7))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n")
	for _, v := range []string{"nan", "NaN", "-nan"} {
		code, _, stderr := ndconvCLI(t, dir, "correlate", "-k", "k.csv", "--border", "constant", "--cval", v, "in.npy", "out.npy")
		if code != 2 || !strings.Contains(stderr, "--cval: NaN is not supported") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--cval %s: exit %d, stderr %q", v, code, stderr)
		}
		assertNoOutput(t, dir, "out.npy")
	}
	for _, v := range []string{"inf", "-inf"} {
		if code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "--border", "constant", "--cval", v, "in.npy", "out.npy"); code != 0 {
			t.Errorf("--cval %s: exit %d: %s", v, code, stderr)
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
