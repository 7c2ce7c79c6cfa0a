package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{"": 0, "512": 512, "64K": 64 << 10, "64KiB": 64 << 10, "4G": 4 << 30, "4gb": 4 << 30, "1.5M": 3 << 19, "2T": 2 << 40} {
		if got, err := parseBytes("--device-memory", s); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"0", "-1", "x", "4X", "1e30G", "K"} {
		if _, err := parseBytes("--device-memory", s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestDeviceMemory: a device-memory bound far below the problem's makes
// the GPU run it in chunks, with the CPU's bits; a bad size is a usage
// error.
func TestDeviceMemory(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 200, 150))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,3,2,1\n2,4,6,4,2\n1,2,3,2,1\n2,4,6,4,2\n1,2,3,2,1\n")
	if code, _, _, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "cpu", "in.npy", "cpu.npy"); code != 0 {
		t.Fatalf("cpu: %d %q", code, lines)
	}
	if code, _, _, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device-memory", "lots", "in.npy", "bad.npy"); code != 2 || len(lines) != 1 {
		t.Errorf("--device-memory lots: exit %d, %q", code, lines)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "cpu.npy"))
	ran := 0
	for _, dev := range []struct {
		name  string
		avail error
	}{{"opencl", opencl.Available()}, {"cuda", cuda.Available()}} {
		if dev.avail != nil {
			continue
		}
		ran++
		out := dev.name + ".npy"
		if code, _, _, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device", dev.name, "--device-memory", "48K", "in.npy", out); code != 0 {
			t.Fatalf("%s: exit %d, %q", dev.name, code, lines)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, out)); !bytes.Equal(got, want) {
			t.Errorf("%s in 48 KiB of device memory: other bits than the CPU's", dev.name)
		}
	}
	if ran == 0 {
		t.Skip("no GPU backend here")
	}
}

// TestTuneFFTCalibrates: tune --method fft on a GPU stores the device's
// FFT scale, which auto's method choice reads.
func TestTuneFFTCalibrates(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	dir := t.TempDir()
	code, stdout := runWithEnv(t, dir, nil, "tune", "--device", "opencl", "--method", "fft", "--shape", "96,96", "--kernel", "15x15",
		"--repeat", "3", "--cache", "tc.json")
	if code != 0 || !strings.Contains(stdout, "FFT scale now") {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	var cache struct {
		GPUs map[string]struct {
			FFTScale float64 `json:"fft_scale"`
			N        int     `json:"fft_scale_n"`
		} `json:"gpus"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "tc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cache); err != nil {
		t.Fatal(err)
	}
	for id, r := range cache.GPUs {
		if !(r.FFTScale > 0) || r.N != 1 {
			t.Errorf("%s: FFT scale %v over %d workloads", id, r.FFTScale, r.N)
		}
		return
	}
	t.Error("no GPU rates stored")
}

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
