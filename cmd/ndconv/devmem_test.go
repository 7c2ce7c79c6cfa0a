package main

import (
	"bytes"
	"os"
	"path/filepath"
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
