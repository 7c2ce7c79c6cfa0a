package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// runWithEnv runs the built binary in dir with extra environment and
// returns its exit status and stdout, failing the test on stderr output
// from a failed run.
func runWithEnv(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binaryPath, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Logf("stderr: %s", stderr.String())
		return ee.ExitCode(), stdout.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String()
}

// TestStreamedEqualsWhole runs correlate and convolve on .npy and .raw
// files streamed (a forced threshold of one byte and small chunks) and
// whole, and checks that the output files are identical (filters of
// several terms too, which read their input whole before); data that
// cannot be mapped falls back to the whole run.
func TestStreamedEqualsWhole(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	writeNPY(t, filepath.Join(dir, "f32.npy"), enginetest.RandomArray(rng, nd.Float32, 61, 37))
	writeNPY(t, filepath.Join(dir, "vol.npy"), enginetest.RandomArray(rng, nd.Uint8, 30, 13, 11))
	u16 := enginetest.RandomArray(rng, nd.Uint16, 40, 30)
	if err := os.WriteFile(filepath.Join(dir, "u16.raw"), u16.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,0,-1,3\n0.5,0.25,1,2,-2\n1,1,1,1,1\n")
	// A big-endian .npy cannot be mapped: it runs whole.
	header := "{'descr': '>f4', 'fortran_order': False, 'shape': (20, 10), }"
	header += strings.Repeat(" ", 117-len(header)) + "\n"
	big := append([]byte("\x93NUMPY\x01\x00v\x00"+header), bytes.Repeat([]byte{0x3f, 0x80, 0, 0}, 200)...)
	os.WriteFile(filepath.Join(dir, "big.npy"), big, 0o644)

	for _, tc := range []struct {
		args   []string
		stream bool
	}{
		{[]string{"correlate", "-k", "k.csv", "f32.npy"}, true},
		{[]string{"convolve", "-k", "gaussian:sigma=2", "--border", "wrap", "--mode", "full", "f32.npy"}, true},
		{[]string{"correlate", "-k", "k.csv", "-k", "k.csv", "--border", "constant", "--cval", "3", "--dtype", "float32", "--origin", "-1,1", "f32.npy"}, true},
		{[]string{"correlate", "-k", "uniform:size=3", "--mode", "valid", "--method", "separable", "vol.npy"}, true},
		{[]string{"correlate", "-k", "k.csv", "--border", "mirror", "--shape", "40,30", "--input-dtype", "uint16", "u16.raw"}, true},
		{[]string{"correlate", "-k", "gradient-magnitude:sigma=1", "f32.npy"}, true},
		{[]string{"correlate", "-k", "log:sigma=1", "-k", "gaussian:sigma=1", "--border", "nearest", "--dtype", "float32", "vol.npy"}, true},
		{[]string{"correlate", "-k", "k.csv", "big.npy"}, false},
	} {
		name := strings.Join(tc.args, " ")
		for _, out := range []string{"out.npy", "out.raw"} {
			args := append(append([]string{}, tc.args...), out)
			if code, _ := runWithEnv(t, dir, nil, args...); code != 0 {
				t.Fatalf("%s: whole run exit %d", name, code)
			}
			want, _ := os.ReadFile(filepath.Join(dir, out))
			os.Remove(filepath.Join(dir, out))
			code, stdout := runWithEnv(t, dir, []string{"NDCONV_STREAM_THRESHOLD=1", "NDCONV_STREAM_CHUNK=3000"}, args...)
			if code != 0 {
				t.Fatalf("%s: streamed run exit %d", name, code)
			}
			if streamed := strings.Contains(stdout, "streamed in"); streamed != tc.stream || (streamed && strings.Contains(stdout, "streamed in 1 chunks")) {
				t.Errorf("%s: %q, streamed in several chunks: want %v", name, stdout, tc.stream)
			}
			got, _ := os.ReadFile(filepath.Join(dir, out))
			if len(want) == 0 || !bytes.Equal(got, want) {
				t.Errorf("%s -> %s: the streamed output differs from the whole run's (%d and %d bytes)", name, out, len(got), len(want))
			}
		}
	}
	// A failed streamed run leaves no output.
	code, _ := runWithEnv(t, dir, []string{"NDCONV_STREAM_THRESHOLD=1"}, "correlate", "-k", "k.csv", "--shape", "40,31", "--input-dtype", "uint16", "u16.raw", "bad.npy")
	if _, err := os.Stat(filepath.Join(dir, "bad.npy")); code == 0 || !os.IsNotExist(err) {
		t.Errorf("a .raw of the wrong size: exit %d, output %v", code, err)
	}
	if _, err := imageio.ReadNPYFile(filepath.Join(dir, "f32.npy")); err != nil {
		t.Fatal(err)
	}
}

// cancelAfter is a context whose Err turns to Canceled after a number of
// calls: a cancellation in the middle of a streamed run, deterministically.
type cancelAfter struct {
	context.Context
	calls atomic.Int64
	after int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

// TestStreamedCancelLeavesNothing cancels a streamed run between chunks and
// checks that it fails and leaves neither the output nor a temporary file.
func TestStreamedCancelLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), enginetest.RandomArray(rand.New(rand.NewPCG(6, 6)), nd.Float32, 200, 50))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	t.Setenv("NDCONV_STREAM_THRESHOLD", "1")
	t.Setenv("NDCONV_STREAM_CHUNK", "2000")
	ctx := &cancelAfter{Context: context.Background(), after: 40}
	var stderr bytes.Buffer
	code := run(ctx, []string{"correlate", "-q", "-k", filepath.Join(dir, "k.csv"), filepath.Join(dir, "in.npy"), filepath.Join(dir, "out.npy")},
		&bytes.Buffer{}, &stderr, runFilter)
	if code == 0 || !strings.Contains(stderr.String(), "canceled") {
		t.Errorf("exit %d, stderr %q: want a cancellation", code, stderr.String())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "in.npy" && e.Name() != "k.csv" {
			t.Errorf("left %s behind", e.Name())
		}
	}
	if ctx.calls.Load() <= ctx.after {
		t.Errorf("the run checked the context %d times: not cancelled mid-way", ctx.calls.Load())
	}
}
