package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestTuneInterrupt: SIGINT during a workload's candidates stops the tune
// after the candidate in hand (not at its time limit), with 128 + SIGINT
// and one line; the rates measured first are saved, the interrupted
// workload is not.
func TestTuneInterrupt(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	dir := t.TempDir()
	cmd := exec.Command(binaryPath, "tune", "--device", "opencl", "--shape", "512,512", "--kernel", "5x5",
		"--repeat", "1", "--time-limit", "10m", "--cache", "tc.json")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "rates: cpu") { // the rates measured: the candidates come next
			time.Sleep(time.Second)
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			// A tune that ignores the signal would run to its time
			// limit: after a minute it is killed and fails below.
			time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		}
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(syscall.SIGINT) {
		t.Fatalf("exit %v, want %d (stdout %q, stderr %q)", err, 128+int(syscall.SIGINT), lines, stderr.String())
	}
	// ndconv's own lines (an OpenCL compiler's build cut by the signal may
	// print its own, as PoCL's does: "1 error generated.").
	var own []string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if strings.HasPrefix(l, "ndconv:") {
			own = append(own, l)
		}
	}
	if len(own) != 1 || !strings.Contains(own[0], "stopped by") {
		t.Errorf("stderr %q, want one line of ndconv's saying it was stopped", stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "tc.json"))
	if err != nil {
		t.Fatalf("the rates were not saved: %v", err)
	}
	var cache struct {
		CPU     json.RawMessage `json:"cpu"`
		Entries map[string]any  `json:"entries"`
	}
	if err := json.Unmarshal(b, &cache); err != nil {
		t.Fatal(err)
	}
	if len(cache.CPU) == 0 || len(cache.Entries) != 0 {
		t.Errorf("cache %s: want the CPU rates and no entry", b)
	}
}
