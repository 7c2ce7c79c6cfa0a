package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"

	"github.com/ndconv/ndconv/opencl"
)

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

// TestTuneTimeLimit: --time-limit stops a workload's candidates early
// (the line says how many of them were measured) and the cache is saved.
func TestTuneTimeLimit(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	dir := t.TempDir()
	code, stdout := runWithEnv(t, dir, nil, "tune", "--device", "opencl", "--shape", "64,64", "--kernel", "3x3",
		"--repeat", "1", "--time-limit", "1ns", "--cache", "tc.json")
	if code != 0 || !strings.Contains(stdout, "0 of ") {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "tc.json")); err != nil {
		t.Errorf("no cache saved: %v", err)
	}
	if code, _ := runWithEnv(t, dir, nil, "tune", "--device", "opencl", "--time-limit", "soon"); code != 2 {
		t.Errorf("--time-limit soon: exit %d, want 2", code)
	}
}

// TestOpenCLBuildQuiet: a command that builds kernels on an OpenCL device
// prints nothing on stderr — PoCL's compiler would print its warnings'
// count there ("3 warnings generated." for winograd.cl), so its builds
// pass -w. Fresh kernel caches (ndconv's and PoCL's), so that it builds.
func TestOpenCLBuildQuiet(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(41, 1))
	writeNPY(t, filepath.Join(dir, "in.npy"), enginetest.RandomArray(rng, nd.Float32, 40, 36))
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rng, nd.Float32, 3, 3))
	cmd := exec.Command(binaryPath, "correlate", "-q", "-k", "k.npy", "--method", "winograd", "--device", "opencl", "in.npy", "out.npy")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NDCONV_CACHE_DIR="+filepath.Join(dir, "nd-cache"), "POCL_CACHE_DIR="+filepath.Join(dir, "pocl-cache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
}
