package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestPanicIsOneLine injects a panic (the test-hook binary, with
// NDCONV_TESTHOOK_PANIC=STAGE) on each goroutine a filter job runs on —
// the reader, the main goroutine, the engine's workers, and, streamed, the
// chunk producer and the chunk writer — and finds exit status 1, one line
// on stderr naming an internal error with the panic's value, and neither
// the output nor a temporary file.
func TestPanicIsOneLine(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 120, 90))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	whole := []string{"NDCONV_STREAM_THRESHOLD=" + "1000000000"}
	streamed := []string{"NDCONV_STREAM_THRESHOLD=1", "NDCONV_STREAM_CHUNK=4096"}
	for _, c := range []struct {
		stage string
		env   []string
	}{
		{"reading", whole},
		{"computing", whole},
		{"worker", whole},
		{"worker", streamed},
		{"streaming", streamed},
		{"sink", streamed},
	} {
		name := c.stage + "/whole"
		if c.env[0] == streamed[0] {
			name = c.stage + "/streamed"
		}
		t.Run(name, func(t *testing.T) {
			code, _, _, lines := runHookedEnv(t, dir, append(c.env, "NDCONV_TESTHOOK_PANIC="+c.stage), "correlate", "-q", "-k", "k.csv", "in.npy", "out.npy")
			if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "internal error") || !strings.Contains(lines[0], "injected panic") {
				t.Errorf("exit %d, stderr %q; want 1 and one line naming the internal error and the panic", code, lines)
			}
			assertNoOutput(t, dir, "out.npy")
		})
	}
	// The same runs without a panic write the output: the cases above
	// could fail.
	for _, env := range [][]string{whole, streamed} {
		if code, _, _, lines := runHookedEnv(t, dir, env, "correlate", "-q", "-k", "k.csv", "in.npy", "out.npy"); code != 0 {
			t.Fatalf("%v: exit %d: %q", env, code, lines)
		}
		if err := os.Remove(filepath.Join(dir, "out.npy")); err != nil {
			t.Error(err)
		}
	}
	// NDCONV_DEBUG adds the stack.
	_, _, _, lines := runHookedEnv(t, dir, append(whole, "NDCONV_TESTHOOK_PANIC=worker", "NDCONV_DEBUG=1"), "correlate", "-q", "-k", "k.csv", "in.npy", "out.npy")
	if len(lines) < 3 || !strings.Contains(strings.Join(lines, "\n"), "goroutine") {
		t.Errorf("NDCONV_DEBUG=1: stderr %q, want the line and a stack", lines)
	}
	assertNoOutput(t, dir, "out.npy")
}
