package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/s3test"
	"github.com/ndconv/ndconv/job"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata (plan --emit)")

// planJob writes a 64-block job's input into dir: a 64×48×40 float32
// Zarr in shards of 16×12×10 (chunks of 8×6×5) and a random 5×5×5
// kernel, k.npy; its plan's blocks are one shard each (4×4×4).
func planJob(t *testing.T, dir string, seed uint64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 64))
	writeZarrInput(t, filepath.Join(dir, "in.zarr"), enginetest.RandomArray(rng, nd.Float32, 64, 48, 40), []int{16, 12, 10}, []int{8, 6, 5}, "zstd")
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rng, nd.Float32, 5, 5, 5))
	return []string{"-k", "k.npy", "--border", "wrap", "--device", "cpu", "--method", "direct", "--blocks", "16,12,10"}
}

// storeSums are the sha256 of every object a store holds, by key, but
// the metadata (whose attributes hold the plan's hash, which names the
// output).
func storeSums(t *testing.T, s zarr.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, k := range keys {
		if strings.HasSuffix(k, "zarr.json") {
			continue
		}
		b, err := s.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		sums[k] = hex.EncodeToString(h[:])
	}
	return sums
}

func sameSums(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: nothing stored to compare", what)
	}
	bad := 0
	for k, v := range want {
		if got[k] != v {
			bad++
		}
	}
	if bad > 0 || len(got) != len(want) {
		t.Errorf("%s: %d of %d objects differ (%d objects, want %d)", what, bad, len(want), len(got), len(want))
	}
}

// TestPlanWorkersKilled: a 64-block plan run by 8 worker processes, two
// of them killed (SIGKILL) at random points and run again at their
// index, stores the same objects, byte for byte, as the same plan run in
// this process, and its output is the whole run's (correlate to .npy,
// read whole); status counts 0/64 before and 64/64 after.
func TestPlanWorkersKilled(t *testing.T) {
	dir := t.TempDir()
	args := planJob(t, dir, 1)
	for _, p := range [][]string{
		{"in.zarr", "out.zarr", "out.json"},
		{filepath.Join(dir, "in.zarr"), filepath.Join(dir, "inproc.zarr"), "inproc.json"}, // for this process
	} {
		if code, stdout, stderr := ndconvCLI(t, dir, append([]string{"plan", p[0], p[1], "-o", p[2]}, args...)...); code != 0 || !strings.Contains(stdout, "64 blocks") {
			t.Fatalf("plan %s: exit %d: %s%s", p[2], code, stdout, stderr)
		}
	}
	if _, stdout, _ := ndconvCLI(t, dir, "status", "--plan", "out.json"); stdout != "0/64 blocks done\n" {
		t.Fatalf("status before the workers: %q", stdout)
	}
	// The same plan (but its output) in this process.
	ctx := context.Background()
	spec, err := job.Load(ctx, filepath.Join(dir, "inproc.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := spec.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	r.Close()
	want := storeSums(t, zarr.NewDirStore(filepath.Join(dir, "inproc.zarr")))
	// Eight workers at once; two killed at random points.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	victims := rng.Perm(8)[:2]
	var wg sync.WaitGroup
	outcome := make([]string, 8)
	for i := range 8 {
		cmd := exec.Command(binaryPath, "worker", "--plan", "out.json", "--count", "8", "-q")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i), "NDCONV_BLOCKS_IN_FLIGHT=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := i == victims[0] || i == victims[1]
		delay := time.Duration(10+rng.IntN(250)) * time.Millisecond
		wg.Go(func() {
			if kill {
				time.AfterFunc(delay, func() { cmd.Process.Kill() })
			}
			err := cmd.Wait()
			switch {
			case kill && err != nil:
				outcome[i] = fmt.Sprintf("killed after %v", delay)
			case kill:
				outcome[i] = fmt.Sprintf("done before its kill at %v", delay)
			case err != nil:
				outcome[i] = fmt.Sprintf("failed: %v: %s", err, stderr.String())
			}
		})
	}
	wg.Wait()
	for i, o := range outcome {
		if strings.HasPrefix(o, "failed") {
			t.Fatalf("worker %d %s", i, o)
		}
	}
	_, mid, _ := ndconvCLI(t, dir, "status", "--plan", "out.json")
	t.Logf("workers %d and %d: %s, %s; then status %s", victims[0], victims[1], outcome[victims[0]], outcome[victims[1]], strings.TrimSpace(mid))
	// What a worker killed mid-write leaves: a shard's temporary file,
	// named for its dead writer; planted beside a victim's first block
	// (its writer a real process, killed), with one of a live writer (this
	// process) beside its second. Its re-run removes the first, keeps the
	// second (whose rename would still land), and the killed workers'
	// own are gone too.
	share := spec.Share(victims[0], 8)
	deadTmp, liveTmp := plantTemps(t, filepath.Join(dir, "out.zarr"), share[0], share[1])
	for n, i := range victims {
		args := []string{"worker", "--plan", "out.json", "--index", fmt.Sprint(i), "--count", "8"}
		if n == 0 {
			args = append(args, "--cpuprofile", "w.pprof")
		}
		cmd := exec.Command(binaryPath, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("worker %d again: %v: %s", i, err, out)
		}
	}
	temps := tempFiles(t, filepath.Join(dir, "out.zarr"))
	if len(temps) != 1 || temps[0] != liveTmp {
		t.Errorf("temporary files after the re-runs: %q; want only the live writer's %s (the dead writer's was %s)", temps, liveTmp, deadTmp)
	}
	os.Remove(liveTmp)
	// --cpuprofile wrote a profile (gzipped protocol buffers).
	if b, err := os.ReadFile(filepath.Join(dir, "w.pprof")); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("worker --cpuprofile: %d bytes, %v; want a gzipped profile", len(b), err)
	}
	if code, stdout, _ := ndconvCLI(t, dir, "status", "--plan", "out.json"); code != 0 || stdout != "64/64 blocks done\n" {
		t.Fatalf("status after the workers: exit %d, %q", code, stdout)
	}
	sameSums(t, "the workers' output against the in-process run's", storeSums(t, zarr.NewDirStore(filepath.Join(dir, "out.zarr"))), want)
	// The whole run: read whole, computed whole, written to .npy.
	if code, _, stderr := ndconvCLI(t, dir, append([]string{"correlate", "-q", "in.zarr", "whole.npy"}, args[:len(args)-2]...)...); code != 0 {
		t.Fatalf("the whole run: exit %d: %s", code, stderr)
	}
	whole, err := imageio.ReadNPYFile(filepath.Join(dir, "whole.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readZarrOutput(t, filepath.Join(dir, "out.zarr")); !bytes.Equal(got.Bytes(), whole.Bytes()) {
		t.Error("the workers' output differs from the whole run's")
	}
}

// TestPlanBucket: plan, workers and status with the input, the output
// and the plan in an S3 bucket (the test server) store the objects the
// same plan stores on files.
func TestPlanBucket(t *testing.T) {
	srv := s3test.New(t)
	dir := t.TempDir()
	args := planJob(t, dir, 2)
	// Unsharded chunks (a request each rather than two), for a fast test.
	rng := rand.New(rand.NewPCG(2, 2))
	os.RemoveAll(filepath.Join(dir, "in.zarr"))
	writeZarrInput(t, filepath.Join(dir, "in.zarr"), enginetest.RandomArray(rng, nd.Float32, 64, 48, 40), []int{16, 12, 10}, nil, "zstd")
	ctx := context.Background()
	in, err := blobstore.Open(ctx, srv.URL("in.zarr"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	local := zarr.NewDirStore(filepath.Join(dir, "in.zarr"))
	keys, _ := local.List(ctx, "")
	for _, k := range keys {
		b, _ := local.Get(ctx, k)
		if err := in.Put(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binaryPath, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), srv.Env()...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
		return string(out)
	}
	plan := srv.URL("jobs/plan.json")
	run(append([]string{"plan", srv.URL("in.zarr"), srv.URL("out.zarr"), "-o", plan, "-q"}, args...)...)
	run(append([]string{"plan", "in.zarr", "out.zarr", "-o", "plan.json", "-q"}, args...)...)
	for i := range 2 {
		run("worker", "--plan", plan, "--index", fmt.Sprint(i), "--count", "2", "-q")
		run("worker", "--plan", "plan.json", "--index", fmt.Sprint(i), "--count", "2", "-q")
	}
	if got := run("status", "--plan", plan); got != "64/64 blocks done\n" {
		t.Fatalf("status in the bucket: %q", got)
	}
	out, err := blobstore.Open(ctx, srv.URL("out.zarr"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	sums := func(s zarr.Store) map[string]string {
		m := storeSums(t, s)
		for k := range m {
			if strings.HasSuffix(k, ".zattrs") {
				delete(m, k) // the plan's hash, which names the output
			}
		}
		return m
	}
	sameSums(t, "the bucket's output against the files'", sums(out), sums(zarr.NewDirStore(filepath.Join(dir, "out.zarr"))))
}

// TestPlanEmit: plan --emit k8s and --emit slurm write the workers' job
// (golden files; go test -update rewrites them).
func TestPlanEmit(t *testing.T) {
	dir := t.TempDir()
	args := planJob(t, dir, 3)
	for _, c := range []struct{ emit, golden string }{
		{"k8s", "plan-k8s.golden"},
		{"slurm", "plan-slurm.golden"},
	} {
		code, stdout, stderr := ndconvCLI(t, dir, append([]string{"plan", "in.zarr", "out.zarr", "-o", "plan.json",
			"--emit", c.emit, "--image", "ghcr.io/ndconv/ndconv:1", "--count", "8"}, args...)...)
		if code != 0 {
			t.Fatalf("--emit %s: exit %d: %s", c.emit, code, stderr)
		}
		path := filepath.Join("testdata", c.golden)
		if *updateGolden {
			if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if stdout != string(want) {
			t.Errorf("--emit %s wrote\n%s\nwant (%s)\n%s", c.emit, stdout, path, want)
		}
	}
}

// TestPlanBadInput: each mistake is one line and a non-zero exit, and
// leaves the output alone.
func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	args := planJob(t, dir, 4)
	if code, _, stderr := ndconvCLI(t, dir, append([]string{"plan", "in.zarr", "out.zarr", "-o", "plan.json", "-q"}, args...)...); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	// Another plan onto the same output.
	other := append([]string{"plan", "in.zarr", "out.zarr", "-o", "other.json"}, args...)
	other = append(other, "--border", "reflect") // the last --border wins
	writeText(t, filepath.Join(dir, "edited.json"), "{}")
	cases := []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{[]string{"worker", "--plan", "plan.json"}, nil, 2, "no index"},
		{[]string{"worker", "--plan", "plan.json", "--index", "1"}, nil, 2, "no count"},
		{[]string{"worker", "--plan", "plan.json"}, []string{"SLURM_ARRAY_TASK_ID=2"}, 2, "no count"},
		{[]string{"worker", "--plan", "plan.json", "--index", "3", "--count", "3"}, nil, 2, "0 ≤ index < count"},
		{[]string{"worker", "--plan", "plan.json"}, []string{"JOB_COMPLETION_INDEX=x", "SLURM_ARRAY_TASK_COUNT=4"}, 2, "not an integer"},
		{[]string{"worker", "--index", "0", "--count", "1"}, nil, 2, "--plan"},
		{[]string{"worker", "--plan", "missing.json", "--index", "0", "--count", "1"}, nil, 1, "missing.json"},
		{[]string{"status", "--plan", "edited.json"}, nil, 1, "plan"},
		{[]string{"status"}, nil, 2, "--plan"},
		{append([]string{"plan", "in.zarr", "out.zarr"}, args...), nil, 2, "-o PLAN"},
		{append([]string{"plan", "in.zarr", "x.npy", "-o", "p.json"}, args...), nil, 2, "Zarr"},
		{append([]string{"plan", "in.zarr", "y.zarr", "-o", "p.json", "--emit", "nomad"}, args...), nil, 2, "--emit"},
		{append([]string{"plan", "in.zarr", "y.zarr", "-o", "p.json", "--emit", "k8s"}, args...), nil, 2, "--image"},
		{append([]string{"plan", "in.zarr", "y.zarr", "-o", "p.json", "--blocks", "10,12,10"}, args[:len(args)-2]...), nil, 1, "multiple"},
		{other, nil, 1, "not by this plan"},
	}
	before := storeSums(t, zarr.NewDirStore(filepath.Join(dir, "out.zarr")))
	for _, c := range cases {
		cmd := exec.Command(binaryPath, c.args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=", "SLURM_ARRAY_TASK_ID=", "SLURM_ARRAY_TASK_COUNT=")
		cmd.Env = append(cmd.Env, c.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != c.code || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: exit %d (want %d): %q (want one line with %q)", c.args, code, c.code, stderr.String(), c.want)
		}
	}
	after := storeSums(t, zarr.NewDirStore(filepath.Join(dir, "out.zarr")))
	if len(after) != len(before) {
		t.Errorf("the refused commands changed the output: %d objects, %d before", len(after), len(before))
	}
}

// plantTemps plants beside the shards of two blocks of the 4×4×4-block
// output at out (one shard a block) what a Put leaves when its writer
// dies before its rename (".NAME-PID@HOST-RANDOM"): for deadBlock, a
// writer that was a real process, killed; for liveBlock, this process.
// It returns their paths.
func plantTemps(t *testing.T, out string, deadBlock, liveBlock int) (dead, live string) {
	t.Helper()
	a, err := zarr.Open(context.Background(), zarr.NewDirStore(out), "")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			return r
		}
		return '_'
	}, host)
	writer := exec.Command("sleep", "60")
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	writer.Process.Kill()
	writer.Wait()
	plant := func(block, pid int) string {
		key := a.Key([]int{block / 16, block / 4 % 4, block % 4})
		p := filepath.Join(out, filepath.FromSlash(key))
		tmp := filepath.Join(filepath.Dir(p), fmt.Sprintf(".%s-%d@%s-%d", filepath.Base(p), pid, host, 1000+block))
		if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tmp, []byte("half a shard"), 0o644); err != nil {
			t.Fatal(err)
		}
		return tmp
	}
	return plant(deadBlock, writer.Process.Pid), plant(liveBlock, os.Getpid())
}

// tempFiles lists the files under dir whose names start with "." but
// the metadata's (Zarr v2's .zarray and the like): Puts' temporaries.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var temps []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), "-") {
			temps = append(temps, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return temps
}
