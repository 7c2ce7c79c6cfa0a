package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
	"github.com/ndconv/ndconv/plan"
)

// testHookBinary is ndconv built with the ndconv_testhook tag (stages and
// notes on stderr), once, in cliTempDir (or NDCONV_CLI_HOOK_BINARY).
var testHookBinary = func() func(t *testing.T) string {
	var once sync.Once
	var out []byte
	var err error
	bin := ""
	return func(t *testing.T) string {
		t.Helper()
		once.Do(func() {
			if prebuiltHook != "" {
				bin, err = filepath.Abs(prebuiltHook)
				return
			}
			bin = filepath.Join(cliTempDir, "ndconv-testhook")
			out, err = exec.Command("go", "build", "-tags", strings.Join(append([]string{"ndconv_testhook"}, cliTags...), ","), "-o", bin, ".").CombinedOutput()
		})
		if err != nil {
			t.Fatalf("building with the test hook: %v\n%s", err, out)
		}
		return bin
	}
}()

// runHooked runs the test-hook binary in dir, writing at full speed: exit
// status, stdout, the hook's notes and the other stderr lines.
func runHooked(t *testing.T, dir string, args ...string) (code int, stdout string, notes, lines []string) {
	t.Helper()
	return runHookedEnv(t, dir, nil, args...)
}

// runHookedEnv is runHooked with env added to the environment.
func runHookedEnv(t *testing.T, dir string, env []string, args ...string) (code int, stdout string, notes, lines []string) {
	t.Helper()
	cmd := exec.Command(testHookBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NDCONV_TESTHOOK_FAST_WRITE=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
		if note, ok := strings.CutPrefix(l, "testhook: "); ok {
			notes = append(notes, note)
		} else if l != "" {
			lines = append(lines, l)
		}
	}
	return code, out.String(), notes, lines
}

// TestPrewarmOnlyForGPUs: --device cpu never starts a GPU; auto starts
// its prewarm before reading an input of plan.AutoPrewarmMinBytes, none
// for a small one, and where no GPU is usable (here) runs on the CPU with
// the same bits and says why on the summary line; a named GPU that is not
// here fails with one line, as without the prewarm.
func TestPrewarmOnlyForGPUs(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 1024, plan.AutoPrewarmMinBytes/4/1024))
	writeNPY(t, filepath.Join(dir, "small.npy"), ramp(nd.Float32, 64, 48))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")

	code, stdout, notes, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "cpu", "in.npy", "cpu.npy")
	if code != 0 || len(lines) != 0 {
		t.Fatalf("--device cpu: exit %d, %q", code, lines)
	}
	for _, n := range notes {
		if strings.HasPrefix(n, "prewarm") {
			t.Errorf("--device cpu started a GPU: %q", notes)
		}
	}
	if strings.Contains(stdout, "auto:") {
		t.Errorf("--device cpu explains an auto choice: %q", stdout)
	}
	if _, _, notes, _ := runHooked(t, dir, "correlate", "-k", "k.csv", "small.npy", "small-out.npy"); indexOf(notes, "prewarm auto") >= 0 {
		t.Errorf("auto prewarmed for a small input: %q", notes)
	}

	code, stdout, notes, lines = runHooked(t, dir, "correlate", "-k", "k.csv", "in.npy", "auto.npy")
	if code != 0 || len(lines) != 0 {
		t.Fatalf("auto: exit %d, %q", code, lines)
	}
	if i, j := indexOf(notes, "prewarm auto"), indexOf(notes, "reading"); i < 0 || j < 0 || i > j {
		t.Errorf("auto: notes %q, want the prewarm before reading", notes)
	}
	if !strings.Contains(stdout, "; auto: ") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("auto: summary %q, want one line ending with the choice", stdout)
	}
	if hasGPU := cuda.Available() == nil; !hasGPU {
		if !strings.Contains(stdout, "on cpu") {
			t.Errorf("auto without a GPU: %q", stdout)
		}
		a, _ := os.ReadFile(filepath.Join(dir, "cpu.npy"))
		b, _ := os.ReadFile(filepath.Join(dir, "auto.npy"))
		if !bytes.Equal(a, b) {
			t.Error("auto's output differs from the CPU's")
		}
		code, _, notes, lines = runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "cuda", "in.npy", "cuda.npy")
		if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "device cuda:0 unavailable") || indexOf(notes, "prewarm cuda:0") < 0 {
			t.Errorf("--device cuda without CUDA: exit %d, %q, notes %q", code, lines, notes)
		}
		assertNoOutput(t, dir, "cuda.npy")
	}
}

// TestPlanFromHeader: for a named GPU and a .npy input, the plan is built
// from the header while the data are read, and gives the CPU's bits (OpenCL:
// PoCL here); a PNG, whose header is not read apart, plans after the read
// (CUDA, absent here, then fails after the read).
func TestPlanFromHeader(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 40, 24))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	if code, _, _, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "cpu", "in.npy", "cpu.npy"); code != 0 {
		t.Fatalf("cpu: %d %q", code, lines)
	}
	code, stdout, notes, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "opencl", "in.npy", "cl.npy")
	if code != 0 || len(lines) != 0 || !strings.Contains(stdout, "on opencl:") {
		t.Fatalf("opencl: exit %d, %q %q", code, stdout, lines)
	}
	if i, j := indexOf(notes, "planning from the header"), indexOf(notes, "reading"); i < 0 || i > j {
		t.Errorf("notes %q: no plan from the header before reading", notes)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "cpu.npy"))
	b, _ := os.ReadFile(filepath.Join(dir, "cl.npy"))
	if !bytes.Equal(a, b) {
		t.Error("the plan from the header gives other bits than the CPU")
	}
	img, _ := nd.New(nd.Uint8, 12, 10)
	if err := imageio.WriteFile(filepath.Join(dir, "img.png"), img, imageio.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if cuda.Available() == nil {
		return
	}
	_, _, notes, _ = runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "cuda", "img.png", "img-out.png")
	if indexOf(notes, "planning from the header") >= 0 || indexOf(notes, "reading") < 0 {
		t.Errorf("png: notes %q", notes)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestTuneRatesCPU: `tune --rates --device cpu` measures the CPU in
// seconds and stores its rate in the cache, keeping entries already there;
// the CPU without --rates is a usage error.
func TestTuneRatesCPU(t *testing.T) {
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "tuning.json")
	writeText(t, cachePath, `{"version": 1, "entries": {"some gpu|direct": {}}}`)
	code, stdout, stderr := ndconvCLI(t, dir, "tune", "--rates", "--device", "cpu", "--cache", cachePath)
	if code != 0 || !strings.Contains(stdout, "rates: cpu ") || !strings.Contains(stdout, "G multiply-adds/s on ") {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	c, err := plan.OpenTuningCache(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := c.CPURates(); !ok || r.MaddsPerSecond <= 0 || r.Cores != runtime.NumCPU() {
		t.Errorf("stored CPU rates %+v, %v", r, ok)
	}
	if c.Len() != 1 {
		t.Errorf("the tuning entries were lost: %d left", c.Len())
	}
	if code, _, stderr := ndconvCLI(t, dir, "tune", "--device", "cpu", "--cache", cachePath); code != 2 {
		t.Errorf("tune --device cpu without --rates: exit %d, %q", code, stderr)
	}
}

// TestPrewarmEveryListedDevice: a device list (blocks of a Zarr output
// shared by several GPUs) starts opening every device of the list at the
// process's start, not only the first, whose plan comes first.
func TestPrewarmEveryListedDevice(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 32, 24))
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	code, _, notes, lines := runHooked(t, dir, "correlate", "-k", "k.csv", "--device", "cuda:0,cuda:1", "in.npy", "out.zarr")
	for _, want := range []string{"prewarm cuda:0", "prewarm cuda:1"} {
		if indexOf(notes, want) < 0 {
			t.Errorf("notes %q: no %q (exit %d, %q)", notes, want, code, lines)
		}
	}
}
