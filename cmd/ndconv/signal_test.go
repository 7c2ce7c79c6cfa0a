//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

// TestSignalLeavesNothing stops a job with SIGINT or SIGTERM while it
// reads, computes and writes (a binary built with the ndconv_testhook tag
// announces each stage on stderr and makes the write slow), and finds an
// exit status of 128 + the signal, one line on stderr and neither the
// output nor a temporary file.
func TestSignalLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	bin := testHookBinary(t)
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 1024, 1024)) // 4 MiB out: several chunks
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")

	cases := []struct {
		stage string
		sig   syscall.Signal
		delay time.Duration // after the stage is announced
		args  []string
	}{
		{"reading", syscall.SIGINT, 0, []string{"-k", "k.csv"}},
		// A 41×41 direct correlation of 1 Mi values runs for seconds: the
		// signal lands well inside it.
		{"computing", syscall.SIGTERM, 500 * time.Millisecond, []string{"-k", "gaussian:sigma=5", "--method", "direct"}},
		{"writing", syscall.SIGTERM, 0, []string{"-k", "k.csv"}},
		{"writing", syscall.SIGINT, 0, []string{"-k", "k.csv"}},
	}
	for _, c := range cases {
		t.Run(c.stage+"/"+c.sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, append(append([]string{"correlate", "-q"}, c.args...), "in.npy", "out.npy")...)
			cmd.Dir = dir
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var lines []string
			sent := false
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				line := sc.Text()
				if !strings.HasPrefix(line, "testhook: ") {
					lines = append(lines, line)
					continue
				}
				if line == "testhook: "+c.stage && !sent {
					time.Sleep(c.delay)
					if err := cmd.Process.Signal(c.sig); err != nil {
						t.Fatal(err)
					}
					sent = true
				}
			}
			err = cmd.Wait()
			if !sent {
				t.Fatalf("the job never announced %s (stderr %q)", c.stage, lines)
			}
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 128+int(c.sig) {
				t.Errorf("exit %v, want %d", err, 128+int(c.sig))
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "stopped by") {
				t.Errorf("stderr %q, want one line saying it was stopped", lines)
			}
			assertNoOutput(t, dir, "out.npy")
		})
	}
	// Without a signal the same binary writes the output: the cases above
	// could fail.
	code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "in.npy", "out.npy")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.npy")); err != nil {
		t.Error(err)
	}
}

// TestSignalManyKeepsWholeFiles: SIGINT during a folder run's second file
// stops the run with 128 + SIGINT and one line; the output of the file
// computed first is whole (equal to a one-file call's), even where it comes
// after the interrupted one in the folder's order, and nothing of the
// second or later is left, not even a temporary file.
func TestSignalManyKeepsWholeFiles(t *testing.T) {
	dir := t.TempDir()
	manyFolder(t, dir)
	cmd := exec.Command(testHookBinary(t), "correlate", "-k", "laplace", "in", "--out-dir", "out")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NDCONV_TESTHOOK_FAST_WRITE=1") // the first file's write is not what is tested
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	computing := 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "testhook: ") {
			lines = append(lines, line)
		} else if line == "testhook: computing" {
			if computing++; computing == 2 {
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	err = cmd.Wait()
	if computing != 2 {
		t.Fatalf("computed %d files, want a signal in the second (stderr %q)", computing, lines)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(syscall.SIGINT) {
		t.Errorf("exit %v, want %d", err, 128+int(syscall.SIGINT))
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "stopped by") {
		t.Errorf("stderr %q, want one line saying it was stopped", lines)
	}
	// The file computed first is whole: a.png, or b.png where the compute
	// workers took it first (they take files as their plans come free).
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(entries) != 1 || (entries[0].Name() != "a.png" && entries[0].Name() != "b.png") {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("out/ holds %q, want a.png or b.png only", names)
	}
	name := entries[0].Name()
	if got, want := readBytes(t, filepath.Join(dir, "out", name)), oneFileOutput(t, dir, name, name, "-k", "laplace"); string(got) != string(want) {
		t.Errorf("%s differs from a one-file call's output", name)
	}
}

// interrupted starts cmd and sends it SIGINT as soon as a line of its
// stdout satisfies at (two seconds after the start where at is nil), then
// waits: its exit status, stdout's lines and ndconv's own stderr lines
// (a library's, such as PoCL's compiler's, aside). A command that ignores
// the signal is killed a minute later and fails its test by its status.
func interrupted(t *testing.T, cmd *exec.Cmd, at func(line string) bool) (code int, stdout, own []string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	signal := func(after time.Duration) {
		time.AfterFunc(after, func() { cmd.Process.Signal(syscall.SIGINT) })
		time.AfterFunc(after+time.Minute, func() { cmd.Process.Kill() })
	}
	if at == nil {
		signal(2 * time.Second)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		stdout = append(stdout, sc.Text())
		if at != nil && at(sc.Text()) {
			signal(0)
			at = nil
		}
	}
	code = -1 // killed
	if err := cmd.Wait(); err == nil {
		code = 0
	} else if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "ndconv:") {
			own = append(own, l)
		}
	}
	return code, stdout, own
}

// stoppedOnce checks an interrupted command's status and stderr: 128 +
// SIGINT and one line of ndconv's saying it was stopped.
func stoppedOnce(t *testing.T, code int, stdout, own []string) {
	t.Helper()
	if code != 128+int(syscall.SIGINT) || len(own) != 1 || !strings.Contains(own[0], "stopped by") {
		t.Errorf("exit %d, ndconv's stderr %q (stdout %q): want %d and one line saying it was stopped", code, own, stdout, 128+int(syscall.SIGINT))
	}
}

// TestSignalBenchGPU: SIGINT stops a GPU bench before its next workload
// (a GPU's timing takes no context; before, the bench ran every workload
// and exited 0).
func TestSignalBenchGPU(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	cmd := exec.Command(binaryPath, "bench", "--device", "opencl", "--workload", "anchors", "--only", "^A-2d-k(3|5|7|9)$", "--scale", "0.1")
	cmd.Dir = t.TempDir()
	code, stdout, own := interrupted(t, cmd, nil)
	stoppedOnce(t, code, stdout, own)
}

// TestSignalTune: SIGINT during a workload's candidates stops the tune
// after the candidate in hand (not at its time limit); the rates measured
// first are saved, the interrupted workload is not.
func TestSignalTune(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL here")
	}
	dir := t.TempDir()
	// The candidates come after the rates' line: over a hundred of them,
	// each timed three times on 1024² (seconds on PoCL, however warm its
	// kernel cache).
	cmd := exec.Command(binaryPath, "tune", "--device", "opencl", "--shape", "1024,1024", "--kernel", "5x5",
		"--repeat", "3", "--time-limit", "10m", "--cache", "tc.json")
	cmd.Dir = dir
	code, stdout, own := interrupted(t, cmd, func(line string) bool { return strings.HasPrefix(line, "rates: cpu") })
	stoppedOnce(t, code, stdout, own)
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
