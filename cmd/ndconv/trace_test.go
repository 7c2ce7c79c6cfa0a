package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestTrace: NDCONV_TRACE prints the job's stages on stderr, in order,
// and nothing without it.
func TestTrace(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 20, 30))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n")
	for _, on := range []bool{true, false} {
		cmd := exec.Command(binaryPath, "correlate", "-k", "k.csv", "--device", "cpu", "in.npy", "out.npy")
		cmd.Dir, cmd.Env = dir, os.Environ()
		if on {
			cmd.Env = append(cmd.Env, "NDCONV_TRACE=1")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatal(err, stderr.String())
		}
		var stages []string
		for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if f := strings.Fields(line); len(f) >= 5 && f[1] == "trace" {
				stages = append(stages, strings.Join(f[4:], " "))
			}
		}
		want := []string{"prewarm started", "read", "planned on cpu", "computed", "written", "exit"}
		if !on {
			want = nil
		}
		if strings.Join(stages, "|") != strings.Join(want, "|") {
			t.Errorf("NDCONV_TRACE %v: stages %q, want %q", on, stages, want)
		}
	}
}
