package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	ndcpu "github.com/ndconv/ndconv/cpu"
)

// TestDevicesNamesSIMDLoops checks that `ndconv devices` names the CPU
// engine's loops in use — the widest the CPU and the build allow, or the
// pure-Go ones where NDCONV_SIMD caps them so — and claims nothing else.
func TestDevicesNamesSIMDLoops(t *testing.T) {
	for _, c := range []struct{ env, want string }{ // env "": this process's NDCONV_SIMD
		{"", ndcpu.Features()},
		{"go", "loops: pure Go"},
	} {
		cmd := exec.Command(binaryPath, "devices")
		cmd.Dir = t.TempDir()
		if c.env != "" { // else inherited, as this test process read it
			cmd.Env = append(os.Environ(), "NDCONV_SIMD="+c.env)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("NDCONV_SIMD=%q ndconv devices: %v", c.env, err)
		}
		if !strings.Contains(string(out), c.want) || strings.Contains(string(out), "later") {
			t.Errorf("NDCONV_SIMD=%q ndconv devices: want %q in\n%s", c.env, c.want, out)
		}
	}
}
