package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// blockCases is how many random jobs TestBlocksEqualWhole runs: 80 by
// default (about 4 s on 2 busy cores), NDCONV_CLI_BLOCK_CASES sets it.
func blockCases() int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_CLI_BLOCK_CASES")); err == nil && n > 0 {
		return n
	}
	return 80
}

// writeZarrInput writes a as a Zarr array at path with shards of shard
// (v3, chunks of chunk) or, with chunk nil, as v2 chunks of shard.
func writeZarrInput(t *testing.T, path string, a nd.Array, shard, chunk []int, comp string) {
	t.Helper()
	m := zarr.Meta{Shape: a.Shape, DType: a.DType(), ChunkShape: chunk, ShardShape: shard, Compressor: zarr.Compressor{Name: comp}}
	if chunk == nil {
		m.Format, m.ChunkShape, m.ShardShape = 2, shard, nil
	}
	ctx := context.Background()
	z, err := zarr.Create(ctx, zarr.NewDirStore(path), "", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := z.WriteRegion(ctx, make([]int, len(a.Shape)), a); err != nil {
		t.Fatal(err)
	}
}

// readZarrOutput reads the whole Zarr array at path.
func readZarrOutput(t *testing.T, path string) nd.Array {
	t.Helper()
	ctx := context.Background()
	z, err := zarr.Open(ctx, zarr.NewDirStore(path), "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := z.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestBlocksEqualWhole: a Zarr output written in N-D blocks (tiny shards,
// tiny block budgets, several in flight, from a Zarr input and from a
// .npy one) holds the bytes of the whole-volume .npy output, for random
// shapes, kernels, borders (wrap included), modes, origins, dtypes and
// banks.
func TestBlocksEqualWhole(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(30, 5))
	borders := []string{"reflect", "constant", "nearest", "mirror", "wrap"}
	modes := []string{"same", "same", "valid", "full"}
	dtypes := []nd.DType{nd.Float32, nd.Float64, nd.Uint8, nd.Int16}
	n := blockCases()
	blocks := 0
	for i := range n {
		rank := 1 + rng.IntN(3)
		shape, shard, chunk := make([]int, rank), make([]int, rank), make([]int, rank)
		kshape := make([]string, rank)
		kmax := []int{3, 5}[rng.IntN(2)]
		for d := range rank {
			shape[d] = 1 + rng.IntN(20)
			// Chunks of up to 10 under kernels of up to 3 or 5 (halos of
			// up to 2 or 4): the cache keeps shells of the larger ones.
			chunk[d] = 1 + rng.IntN(10)
			shard[d] = chunk[d] * (1 + rng.IntN(2))
			kshape[d] = strconv.Itoa(1 + rng.IntN(min(kmax, 2*shape[d]+1)))
		}
		dt := dtypes[rng.IntN(len(dtypes))]
		src := enginetest.RandomArray(rng, dt, shape...)
		in := filepath.Join(dir, fmt.Sprintf("in%d", i))
		writeNPY(t, in+".npy", src)
		sharded := rng.IntN(2) == 0
		if sharded {
			writeZarrInput(t, in+".zarr", src, shard, chunk, "zstd")
		} else {
			writeZarrInput(t, in+".zarr", src, shard, nil, []string{"", "zstd", "blosc"}[rng.IntN(3)])
		}
		// Kernels: one or two (a bank), of random weights.
		var args []string
		for k := range 1 + rng.IntN(2) {
			ks := make([]int, rank)
			for d := range rank {
				ks[d], _ = strconv.Atoi(kshape[d])
			}
			kpath := filepath.Join(dir, fmt.Sprintf("k%d-%d.npy", i, k))
			writeNPY(t, kpath, enginetest.RandomArray(rng, nd.Float64, ks...))
			args = append(args, "-k", kpath)
		}
		border, mode := borders[rng.IntN(len(borders))], modes[rng.IntN(len(modes))]
		args = append(args, "--border", border, "--mode", mode, "--cval", "1.5", "-q")
		if mode == "same" && rng.IntN(3) == 0 {
			args = append(args, "--origin", strconv.Itoa(rng.IntN(3)-1))
		}
		if rng.IntN(3) == 0 {
			args = append(args, "--dtype", "float64")
		}
		op := []string{"correlate", "convolve"}[rng.IntN(2)]
		whole := filepath.Join(dir, fmt.Sprintf("whole%d.npy", i))
		what := fmt.Sprintf("case %d: %s %v %v shards %v chunks %v sharded %v %s", i, op, dt, shape, shard, chunk, sharded, strings.Join(args, " "))
		code, _, lines := cliRun(append([]string{op, in + ".npy", whole}, args...)...)
		if code != 0 {
			// An input the problem refuses (a kernel larger than a valid
			// output) must be refused in blocks too.
			code2, _, lines2 := cliRun(append([]string{op, in + ".zarr", filepath.Join(dir, fmt.Sprintf("refused%d.zarr", i))}, args...)...)
			if code2 == 0 {
				t.Fatalf("%s: whole failed (%v), blocks did not", what, lines)
			}
			_ = lines2
			continue
		}
		want, _, err := imageio.ReadFile(whole, imageio.RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NDCONV_BLOCK_BYTES", strconv.Itoa(1+rng.IntN(4096)))
		t.Setenv("NDCONV_BLOCKS_IN_FLIGHT", strconv.Itoa(1+rng.IntN(4)))
		t.Setenv("NDCONV_BLOCK_CACHE", strconv.Itoa(rng.IntN(1<<16)))
		for _, from := range []string{in + ".zarr", in + ".npy"} {
			out := filepath.Join(dir, fmt.Sprintf("out%d-%s.zarr", i, filepath.Ext(from)[1:]))
			code, _, lines := cliRun(append([]string{op, from, out}, args...)...)
			if code != 0 {
				t.Fatalf("%s from %s: exit %d: %v", what, from, code, lines)
			}
			got := readZarrOutput(t, out)
			if got.DType() != want.DType() || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s from %s: blocks differ from the whole output (%v %v vs %v %v)", what, from, got.DType(), got.Shape, want.DType(), want.Shape)
			}
			blocks++
		}
		os.Unsetenv("NDCONV_BLOCK_BYTES")
		os.Unsetenv("NDCONV_BLOCKS_IN_FLIGHT")
		os.Unsetenv("NDCONV_BLOCK_CACHE")
	}
	t.Logf("%d random jobs, %d outputs in blocks equal to the whole ones", n, blocks)
}

// shardFiles maps each shard file under dir (the array's data, not its
// metadata) to its inode, which a rewrite (temporary then rename) changes.
func shardFiles(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	files := map[string]uint64{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || d.Name() == "zarr.json" {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files[p] = fi.Sys().(*syscall.Stat_t).Ino
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBlocksResume: a run in blocks cancelled after some blocks leaves
// whole shards and metadata that reads (the missing shards read as the
// fill value); --resume then computes only the blocks missing, writes
// only the shards missing (those stored keep their files) and gives the
// bytes of an uninterrupted run; a resume of a complete output writes
// nothing; --resume onto an array of another layout is refused.
func TestBlocksResume(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(30, 6))
	src := enginetest.RandomArray(rng, nd.Float32, 23, 17, 19)
	writeZarrInput(t, filepath.Join(dir, "in.zarr"), src, []int{4, 6, 4}, []int{2, 3, 2}, "zstd")
	writeNPY(t, filepath.Join(dir, "in.npy"), src)
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rng, nd.Float32, 3, 5, 4))
	args := []string{"-k", "k.npy", "--border", "wrap"}
	want := wholeOutput(t, dir, args)
	env := []string{"NDCONV_BLOCK_BYTES=6000", "NDCONV_BLOCKS_IN_FLIGHT=2"}
	out := filepath.Join(dir, "out.zarr")
	code, _, _, lines := runHookedEnv(t, dir, append(env, "NDCONV_TESTHOOK_CANCEL_BLOCKS=7"), append([]string{"correlate", "in.zarr", "out.zarr"}, args...)...)
	if code == 0 || !strings.Contains(strings.Join(lines, "\n"), "cancelled after 7 blocks") {
		t.Fatalf("the cancelled run: exit %d, %v", code, lines)
	}
	before := shardFiles(t, out)
	all := 6 * 3 * 5 // shards of 4×6×4 over 23×17×19
	if len(before) < 7 || len(before) >= all {
		t.Fatalf("the cancelled run stored %d of %d shards", len(before), all)
	}
	// What it left reads: its metadata and every shard whole.
	partial := readZarrOutput(t, out)
	if !slices.Equal(partial.Shape, want.Shape) {
		t.Fatalf("the cancelled run's array is %v, want %v", partial.Shape, want.Shape)
	}
	code, stdout, _, lines := runHookedEnv(t, dir, env, append([]string{"correlate", "in.zarr", "out.zarr", "--resume"}, args...)...)
	if code != 0 {
		t.Fatalf("--resume: exit %d: %v", code, lines)
	}
	if !strings.Contains(stdout, "stored already") || strings.Contains(stdout, ", 0 stored already") {
		t.Fatalf("--resume skipped no block: %s", stdout)
	}
	got := readZarrOutput(t, out)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the resumed output differs from the whole one")
	}
	after := shardFiles(t, out)
	if len(after) != all {
		t.Fatalf("after --resume, %d of %d shards", len(after), all)
	}
	for p, ino := range before {
		if after[p] != ino {
			t.Errorf("--resume rewrote %s, stored before", p)
		}
	}
	// A complete output: every block skipped, no file written.
	code, stdout, _, lines = runHookedEnv(t, dir, env, append([]string{"correlate", "in.zarr", "out.zarr", "--resume"}, args...)...)
	if code != 0 {
		t.Fatalf("--resume again: exit %d: %v", code, lines)
	}
	for p, ino := range shardFiles(t, out) {
		if after[p] != ino {
			t.Errorf("--resume of a complete output rewrote %s", p)
		}
	}
	if !strings.Contains(stdout, "in 0.00 GB") {
		t.Errorf("--resume of a complete output read input: %s", stdout)
	}
	// Another layout (a bank adds an axis) is refused, leaving the array.
	code, _, _, lines = runHookedEnv(t, dir, env, "correlate", "in.zarr", "out.zarr", "--resume", "-k", "k.npy", "-k", "k.npy")
	if code == 0 || !strings.Contains(strings.Join(lines, "\n"), "--resume") {
		t.Fatalf("--resume onto another layout: exit %d, %v", code, lines)
	}
	if !bytes.Equal(readZarrOutput(t, out).Bytes(), want.Bytes()) {
		t.Fatal("a refused --resume changed the output")
	}
	// --resume with an output that is not Zarr is a usage error.
	if code, _, _, _ := runHooked(t, dir, "correlate", "in.npy", "x.npy", "--resume", "-k", "k.npy"); code != 2 {
		t.Errorf("--resume to a .npy: exit %d, want 2", code)
	}
}

// peakAnon runs the CLI with env and args in dir and returns its exit
// status and the largest anonymous memory (RssAnon: not the mapped or
// cached pages of files) it held, sampled every millisecond.
func peakAnon(t *testing.T, dir string, env []string, args ...string) (int, int64, string) {
	t.Helper()
	cmd := exec.Command(binaryPath, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	for {
		if b, err := os.ReadFile(status); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "RssAnon:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					peak = max(peak, kb<<10)
				}
			}
		}
		select {
		case err := <-done:
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return code, peak, stdout.String() + stderr.String()
		case <-time.After(time.Millisecond):
		}
	}
}

// TestBlocksMemoryBound: a 256 MiB float32 Zarr volume filtered in blocks
// of 16 MiB holds far less than the volume in anonymous memory: the
// blocks in flight, the chunks cached and the encoders' buffers, within
// a small factor of that budget.
func TestBlocksMemoryBound(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: the test reads RssAnon")
	}
	dir := t.TempDir()
	const budget, inFlight, cache = 16 << 20, 3, 16 << 20
	shape := []int{256, 256, 1024} // 256 MiB of float32
	src, err := nd.New(nd.Float32, shape...)
	if err != nil {
		t.Fatal(err)
	}
	f := src.Data.([]float32)
	x := uint32(1)
	for i := range f {
		x = x*1664525 + 1013904223
		f[i] = float32(x>>8) / (1 << 24)
	}
	writeZarrInput(t, filepath.Join(dir, "in.zarr"), src, []int{32, 64, 256}, nil, "")
	src = nd.Array{}
	f = nil
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rand.New(rand.NewPCG(1, 2)), nd.Float32, 3, 3, 3))
	env := []string{"NDCONV_BLOCK_BYTES=" + strconv.Itoa(budget), "NDCONV_BLOCKS_IN_FLIGHT=" + strconv.Itoa(inFlight),
		"NDCONV_BLOCK_CACHE=" + strconv.Itoa(cache)}
	code, peak, out := peakAnon(t, dir, env, "correlate", "in.zarr", "out.zarr", "-k", "k.npy", "--device", "cpu")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	held := int64(inFlight*budget + cache)
	t.Logf("peak anonymous memory %.0f MiB for a 256 MiB volume (blocks in flight and cache: %d MiB): %s", float64(peak)/(1<<20), held>>20, out)
	if limit := 3*held + 48<<20; peak > limit {
		t.Errorf("peak anonymous memory %d MiB, more than %d MiB", peak>>20, limit>>20)
	}
}

// TestBlocksParts: an array job's tasks (--part I/N), run one after
// another and all at once into one Zarr output, give the whole run's
// bytes; each task writes only its own blocks' shards, and a task run
// again leaves the others' shards alone.
func TestBlocksParts(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(28, 1))
	src := enginetest.RandomArray(rng, nd.Float32, 23, 17, 19)
	writeZarrInput(t, filepath.Join(dir, "in.zarr"), src, []int{4, 6, 4}, []int{2, 3, 2}, "zstd")
	writeNPY(t, filepath.Join(dir, "in.npy"), src)
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rng, nd.Float32, 3, 5, 4))
	args := []string{"-k", "k.npy", "--border", "mirror"}
	want := wholeOutput(t, dir, args)
	env := []string{"NDCONV_BLOCK_BYTES=6000", "NDCONV_BLOCKS_IN_FLIGHT=2"}
	all := 6 * 3 * 5 // shards of 4×6×4 over 23×17×19
	// One after another: each task adds shards, none rewrites another's.
	var seen map[string]uint64
	for i := range 3 {
		code, _, _, lines := runHookedEnv(t, dir, env, append([]string{"correlate", "in.zarr", "seq.zarr", "--part", fmt.Sprintf("%d/3", i), "-q"}, args...)...)
		if code != 0 {
			t.Fatalf("--part %d/3: exit %d: %v", i, code, lines)
		}
		now := shardFiles(t, filepath.Join(dir, "seq.zarr"))
		for p, ino := range seen {
			if now[p] != ino {
				t.Errorf("--part %d/3 rewrote %s", i, p)
			}
		}
		if i < 2 && len(now) >= all {
			t.Errorf("after task %d of 3, %d of %d shards: the tasks do not split the blocks", i, len(now), all)
		}
		seen = now
	}
	if got := readZarrOutput(t, filepath.Join(dir, "seq.zarr")); !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the tasks run in turn differ from the whole run")
	}
	// All at once, as an array job runs them.
	var wg sync.WaitGroup
	fails := make(chan string, 4)
	for i := range 4 {
		wg.Go(func() {
			if code, _, _, lines := runHookedEnv(t, dir, env, append([]string{"correlate", "in.zarr", "par.zarr", "--part", fmt.Sprintf("%d/4", i), "-q"}, args...)...); code != 0 {
				fails <- fmt.Sprintf("--part %d/4: exit %d: %v", i, code, lines)
			}
		})
	}
	wg.Wait()
	close(fails)
	for f := range fails {
		t.Error(f)
	}
	if got := readZarrOutput(t, filepath.Join(dir, "par.zarr")); !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the tasks run at once differ from the whole run")
	}
	for _, bad := range []string{"3/3", "-1/2", "1/0", "x", "1/2/3"} {
		if code, _, _, _ := runHooked(t, dir, append([]string{"correlate", "in.zarr", "bad.zarr", "--part", bad}, args...)...); code != 2 {
			t.Errorf("--part %s: exit %d, want 2", bad, code)
		}
	}
}

// TestBlocksDevices: a Zarr output's blocks shared by several devices
// (--device cpu,cpu here; cuda:all on a GPU host) give the whole run's
// bytes; several devices are refused where no blocks run.
func TestBlocksDevices(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(28, 2))
	src := enginetest.RandomArray(rng, nd.Float32, 21, 18, 11)
	writeNPY(t, filepath.Join(dir, "in.npy"), src)
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rng, nd.Float32, 3, 3, 5))
	args := []string{"-k", "k.npy", "--border", "wrap"}
	want := wholeOutput(t, dir, args)
	env := []string{"NDCONV_BLOCK_BYTES=6000"}
	// A Zarr input of small shards: its layout, the output's, makes blocks
	// enough for both devices (a .npy's output layout would be one block).
	writeZarrInput(t, filepath.Join(dir, "in.zarr"), src, []int{7, 6, 4}, []int{7, 6, 4}, "zstd")
	code, stdout, _, lines := runHookedEnv(t, dir, env, append([]string{"correlate", "in.zarr", "out.zarr", "--device", "cpu,cpu"}, args...)...)
	if code != 0 {
		t.Fatalf("--device cpu,cpu: %v", lines)
	}
	if !strings.Contains(stdout, " on cpu,cpu, ") { // the summary names every device, not the plan's first
		t.Errorf("--device cpu,cpu: the summary does not name both devices: %q", stdout)
	}
	if m := regexp.MustCompile(` (\d+) blocks of `).FindStringSubmatch(stdout); m == nil || m[1] == "1" {
		t.Errorf("--device cpu,cpu: want several blocks for the two devices: %q", stdout)
	}
	if got := readZarrOutput(t, filepath.Join(dir, "out.zarr")); !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the blocks on two devices differ from the whole run")
	}
	for _, c := range [][]string{
		{"correlate", "in.npy", "out.npy", "--device", "cpu,cpu"},       // not a Zarr output
		{"correlate", "in.npy", "out2.zarr", "--device", "cpu,,cpu"},    // an empty entry
		{"correlate", "in.npy", "out3.zarr", "--device", "nowhere:all"}, // no such backend
	} {
		if code, _, _, _ := runHooked(t, dir, append(c, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", c, code)
		}
	}
}

// wholeOutput runs the job args on dir's in.npy as one array into
// whole.npy and returns it: what a block run must equal.
func wholeOutput(t *testing.T, dir string, args []string) nd.Array {
	t.Helper()
	if code, _, _, lines := runHooked(t, dir, append([]string{"correlate", "in.npy", "whole.npy", "-q"}, args...)...); code != 0 {
		t.Fatalf("whole: %v", lines)
	}
	want, _, err := imageio.ReadFile(filepath.Join(dir, "whole.npy"), imageio.RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return want
}
