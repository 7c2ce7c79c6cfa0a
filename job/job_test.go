package job

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/s3test"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// testJob is a 64-block job: a 48×40×32 float32 Zarr input in shards of
// 12×10×8 (chunks of 6×5×4) correlated with a random 5×5×5 kernel,
// wrap border, in blocks of one shard each (4×4×4 blocks).
type testJob struct {
	dir    string
	src    nd.Array
	kernel ndconv.Kernel
}

func newTestJob(t testing.TB, seed uint64) *testJob {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 28))
	j := &testJob{dir: t.TempDir(), src: enginetest.RandomArray(rng, nd.Float32, 48, 40, 32)}
	k := enginetest.RandomArray(rng, nd.Float64, 5, 5, 5)
	j.kernel = ndconv.NewKernel(k.Shape, k.Data.([]float64))
	writeZarrInput(t, filepath.Join(j.dir, "in.zarr"), j.src, []int{12, 10, 8}, []int{6, 5, 4}, "zstd")
	return j
}

func (j *testJob) config(in, out string) Config {
	return Config{Op: ndconv.Correlation, Input: in, Output: out,
		Filters: func(int) ([]filters.Filter, error) {
			return []filters.Filter{ndconv.KernelFilter("k", j.kernel)}, nil
		},
		Options: ndconv.Options{Border: ndconv.Wrap, Device: "cpu", Method: ndconv.Direct},
		Block:   []int{12, 10, 8}}
}

// plan makes and creates the plan of the job into out (a path in the
// job's folder, or a URL).
func (j *testJob) plan(t *testing.T, in, out string) *Spec {
	t.Helper()
	if !strings.Contains(in, "://") {
		in = filepath.Join(j.dir, in)
	}
	if !strings.Contains(out, "://") {
		out = filepath.Join(j.dir, out)
	}
	s, err := New(context.Background(), j.config(in, out))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// whole is the job's output computed whole, by the library.
func (j *testJob) whole(t *testing.T) nd.Array {
	t.Helper()
	want, err := ndconv.ApplyFilters(context.Background(), ndconv.Correlation, j.src,
		ndconv.Options{Border: ndconv.Wrap, Device: "cpu", Method: ndconv.Direct}, ndconv.KernelFilter("k", j.kernel))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// checksums are the sha256 of every object stored in s, by key, but the
// metadata (whose attributes hold the plan's hash, which names the
// output).
func checksums(t *testing.T, s zarr.Store) map[string]string {
	t.Helper()
	keys, err := s.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, k := range keys {
		if name := k[strings.LastIndex(k, "/")+1:]; name == "zarr.json" || name == ".zattrs" {
			continue
		}
		b, err := s.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		sums[k] = hex.EncodeToString(h[:])
	}
	return sums
}

func readAll(t *testing.T, s zarr.Store) nd.Array {
	t.Helper()
	a, err := zarr.Open(context.Background(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPlanRoundTrip: a plan marshalled and parsed is the same plan (the
// same bytes again, the same hash, the same blocks); an edited plan, a
// plan of another version, one with an unknown field and a malformed
// one are refused.
func TestPlanRoundTrip(t *testing.T) {
	j := newTestJob(t, 1)
	s, err := New(context.Background(), j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, "out.zarr")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) || p.Hash != s.Hash || !strings.HasPrefix(s.Hash, "sha256:") {
		t.Fatalf("the plan parsed marshals to other bytes or hash:\n%s\n%s", data, again)
	}
	if p.Blocks() != 64 || !slices.Equal(p.Grid, []int{4, 4, 4}) || p.Options.Method != "direct" {
		t.Fatalf("blocks %d, grid %v, method %s", p.Blocks(), p.Grid, p.Options.Method)
	}
	if err := s.Save(context.Background(), filepath.Join(j.dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	if l, err := Load(context.Background(), filepath.Join(j.dir, "plan.json")); err != nil || l.Hash != s.Hash {
		t.Fatalf("Load: %v", err)
	}
	w := s.Filters[0].Weights[3]
	for name, bad := range map[string]string{
		"edited":  strings.Replace(string(data), strings.TrimSuffix(strings.TrimSuffix(formatFloat(w), "0"), "."), "7", 1),
		"version": strings.Replace(string(data), `"version": 1`, `"version": 2`, 1),
		"unknown": strings.Replace(string(data), `"version": 1`, `"version": 1, "extra": 0`, 1),
		"cut":     string(data[:len(data)/2]),
		"empty":   "",
	} {
		if bad == string(data) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		_, err := Parse([]byte(bad))
		var pe *PlanError
		if !errors.As(err, &pe) {
			t.Errorf("%s plan: %v, want a *PlanError", name, err)
		}
	}
}

// TestHashMismatch: the output that one plan created is refused by
// another plan's Create, Open and Status (a *MismatchError), and left
// alone; an array that no plan created is refused too.
func TestHashMismatch(t *testing.T) {
	ctx := context.Background()
	j := newTestJob(t, 2)
	a := j.plan(t, "in.zarr", "out.zarr")
	r, err := a.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx, 5); err != nil {
		t.Fatal(err)
	}
	r.Close()
	out := zarr.NewDirStore(filepath.Join(j.dir, "out.zarr"))
	before := checksums(t, out)
	cfg := j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, "out.zarr"))
	cfg.Options.Border = ndconv.Reflect
	b, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Hash == a.Hash {
		t.Fatal("two plans, one hash")
	}
	var mm *MismatchError
	if err := b.Create(ctx); !errors.As(err, &mm) {
		t.Errorf("Create of another plan's output: %v", err)
	}
	if _, err := b.Open(ctx); !errors.As(err, &mm) {
		t.Errorf("Open of another plan's output: %v", err)
	}
	if _, _, err := Status(ctx, b); !errors.As(err, &mm) {
		t.Errorf("Status of another plan's output: %v", err)
	}
	if after := checksums(t, out); len(after) != len(before) || len(after) == 0 {
		t.Errorf("a refused plan changed the output: %d objects, %d before", len(after), len(before))
	}
	if done, total, err := Status(ctx, a); err != nil || done != 1 || total != 64 {
		t.Errorf("Status of the output's own plan: %d/%d, %v", done, total, err)
	}
	// An array of no plan.
	writeZarrInput(t, filepath.Join(j.dir, "other.zarr"), j.src, []int{12, 10, 8}, []int{6, 5, 4}, "zstd")
	c, err := New(ctx, j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, "other.zarr")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Create(ctx); !errors.As(err, &mm) || mm.Have != "" {
		t.Errorf("Create over an array of no plan: %v", err)
	}
}

// TestRunInProcess: the 64 blocks run one at a time in a random order,
// some twice, and by shares, give the whole output's bytes; Status
// counts each block once it is stored; a block run again is skipped
// (stored whole) and writes nothing; Run and RunShare refuse indices out
// of range.
func TestRunInProcess(t *testing.T) {
	ctx := context.Background()
	j := newTestJob(t, 3)
	want := j.whole(t)
	s := j.plan(t, "in.zarr", "one.zarr")
	r, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	order := rng.Perm(64)
	for n, i := range order {
		if err := r.Run(ctx, i); err != nil {
			t.Fatal(err)
		}
		if n%16 == 0 {
			if done, total, err := Status(ctx, s); err != nil || done != n+1 || total != 64 {
				t.Fatalf("after %d blocks: status %d/%d, %v", n+1, done, total, err)
			}
		}
	}
	store := zarr.NewDirStore(filepath.Join(j.dir, "one.zarr"))
	sums := checksums(t, store)
	if got := readAll(t, store); !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the blocks run one at a time differ from the whole output")
	}
	// Again: every block stored, nothing computed.
	r2, err := s.OpenWith(ctx, RunOptions{Stats: &Stats{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if w, k := r2.stats.Written.Load(), r2.stats.Skipped.Load(); w != 0 || k != 64 {
		t.Errorf("a run of a complete output wrote %d blocks, skipped %d", w, k)
	}
	// By shares, into another output: the same objects.
	s2 := j.plan(t, "in.zarr", "shares.zarr")
	r3, err := s2.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	for i := range 5 {
		if err := r3.RunShare(ctx, i, 5); err != nil {
			t.Fatal(err)
		}
	}
	if got := checksums(t, zarr.NewDirStore(filepath.Join(j.dir, "shares.zarr"))); !equalSums(got, sums) {
		t.Error("the shares' output objects differ from the blocks run one at a time")
	}
	for _, bad := range []func() error{
		func() error { return r.Run(ctx, 64) },
		func() error { return r.Run(ctx, -1) },
		func() error { return r.RunShare(ctx, 3, 3) },
		func() error { return r.RunShare(ctx, 0, 0) },
	} {
		var ae *nd.ArgumentError
		if err := bad(); !errors.As(err, &ae) {
			t.Errorf("a bad index: %v, want an *nd.ArgumentError", err)
		}
	}
}

func equalSums(a, b map[string]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestStatusEmptyShards: blocks whose shards hold only the fill value
// (zeros in, zeros out: Zarr stores no such shard) count as done once
// run, by their markers, and are skipped when run again.
func TestStatusEmptyShards(t *testing.T) {
	ctx := context.Background()
	j := newTestJob(t, 4)
	// Zero the first half of axis 0: the kernel's reach (2) past it
	// leaves the first shard row of output blocks all zero.
	f := j.src.Data.([]float32)
	clear(f[:len(f)/2])
	if err := os.RemoveAll(filepath.Join(j.dir, "in.zarr")); err != nil {
		t.Fatal(err)
	}
	writeZarrInput(t, filepath.Join(j.dir, "in.zarr"), j.src, []int{12, 10, 8}, []int{6, 5, 4}, "zstd")
	cfg := j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, "out.zarr"))
	cfg.Options.Border = ndconv.Constant
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := s.OpenWith(ctx, RunOptions{Stats: &Stats{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	keys, _ := zarr.NewDirStore(filepath.Join(j.dir, "out.zarr")).List(ctx, emptyFolder+"/")
	if len(keys) == 0 {
		t.Fatal("no shard holds only zeros: the test no longer tests markers")
	}
	if done, total, err := Status(ctx, s); err != nil || done != total {
		t.Fatalf("status %d/%d (%d shards of zeros), %v", done, total, len(keys), err)
	}
	r2, err := s.OpenWith(ctx, RunOptions{Stats: &Stats{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if w := r2.stats.Written.Load(); w != 0 {
		t.Errorf("a complete output with shards of zeros: %d blocks computed again", w)
	}
}

// TestBucket: the plan saved to and loaded from an S3 bucket (the test
// server), the input read from it and the output written to it, by
// shares, give the objects of the same plan run on files.
func TestBucket(t *testing.T) {
	ctx := context.Background()
	srv := s3test.New(t)
	j := newTestJob(t, 5)
	// Unsharded (v2) chunks: a request per chunk, not two, for a fast
	// test (the gofakes3 server answers a request in a millisecond).
	if err := os.RemoveAll(filepath.Join(j.dir, "in.zarr")); err != nil {
		t.Fatal(err)
	}
	writeZarrInput(t, filepath.Join(j.dir, "in.zarr"), j.src, []int{12, 10, 8}, nil, "zstd")
	local := j.plan(t, "in.zarr", "out.zarr")
	lr, err := local.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	if err := lr.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	// The input copied into the bucket.
	in, err := blobstore.Open(ctx, srv.URL("in.zarr"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := zarr.NewDirStore(filepath.Join(j.dir, "in.zarr"))
	keys, _ := dir.List(ctx, "")
	for _, k := range keys {
		b, _ := dir.Get(ctx, k)
		if err := in.Put(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	s := j.plan(t, srv.URL("in.zarr"), srv.URL("out.zarr"))
	planURL := srv.URL("jobs/plan.json")
	if err := s.Save(ctx, planURL); err != nil {
		t.Fatal(err)
	}
	p, err := Load(ctx, planURL)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hash != s.Hash {
		t.Fatal("the plan loaded from the bucket has another hash")
	}
	for i := range 3 {
		r, err := p.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.RunShare(ctx, i, 3); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	if done, total, err := Status(ctx, p); err != nil || done != total || total != 64 {
		t.Fatalf("status %d/%d, %v", done, total, err)
	}
	out, err := blobstore.Open(ctx, srv.URL("out.zarr"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if !equalSums(checksums(t, out), checksums(t, zarr.NewDirStore(filepath.Join(j.dir, "out.zarr")))) {
		t.Error("the bucket's output objects differ from the files'")
	}
	if _, err := Load(ctx, srv.URL("jobs/missing.json")); err == nil {
		t.Error("a missing plan in the bucket loaded")
	}
}

// TestLayoutIsImageio: the output layout New aligns the blocks with is
// the one imageio.CreateZarr makes: from a Zarr input's metadata (the
// same rank, and a bank's one more), and with none (a mapped input).
func TestLayoutIsImageio(t *testing.T) {
	ctx := context.Background()
	j := newTestJob(t, 6)
	_, zmeta, err := imageio.OpenZarr(ctx, filepath.Join(j.dir, "in.zarr"))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		shape []int
		meta  imageio.Meta
	}{
		{[]int{48, 40, 32}, zmeta}, {[]int{48, 40, 32, 2}, zmeta},
		{[]int{48, 40, 32}, imageio.Meta{}}, {[]int{300, 7}, imageio.Meta{}}, {[]int{5000}, imageio.Meta{}},
		{[]int{64, 64, 64, 3}, imageio.Meta{}}, {[]int{1000, 900, 3}, imageio.Meta{}},
	} {
		for _, dt := range []nd.DType{nd.Float32, nd.Uint8, nd.Float64} {
			m := imageio.ZarrLayout(c.shape, dt, c.meta)
			a, err := imageio.CreateZarr(ctx, filepath.Join(j.dir, fmt.Sprintf("l%d%v.zarr", i, dt)), c.shape, dt, imageio.WriteOptions{Meta: c.meta}, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(imageio.ZarrShardShape(m), a.ShardShape()) || !slices.Equal(m.ChunkShape, a.ChunkShape()) {
				t.Errorf("%v %v: New's layout has shards %v of chunks %v; imageio's %v of %v", dt, c.shape, imageio.ZarrShardShape(m), m.ChunkShape, a.ShardShape(), a.ChunkShape())
			}
		}
	}
}

// TestPlanarBank: a bank of two kernels with the planar layout plans an
// output of (2, …) whose boxes put the bank first and whole; its plan
// keeps the layout through Marshal and Parse, refuses a layout that is
// not planar, and runs to Execute's planar output; the interleaved plan
// of the same bank keeps the bank last.
func TestPlanarBank(t *testing.T) {
	ctx := context.Background()
	j := newTestJob(t, 5)
	k2 := ndconv.NewKernel([]int{5, 5, 5}, slices.Repeat([]float64{1}, 125))
	config := func(out string, layout ndconv.BankLayout) Config {
		c := j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, out))
		c.Filters = func(int) ([]filters.Filter, error) {
			return []filters.Filter{ndconv.KernelFilter("k", j.kernel), ndconv.KernelFilter("box", k2)}, nil
		}
		c.Options.BankLayout, c.Block = layout, nil
		return c
	}
	s, err := New(ctx, config("planar.zarr", ndconv.Planar))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inter, err := New(ctx, config("inter.zarr", ndconv.Interleaved))
	if err != nil {
		t.Fatal(err)
	}
	defer inter.Close()
	if s.Options.BankLayout != "planar" || inter.Options.BankLayout != "" ||
		!slices.Equal(s.OutputShape, []int{2, 48, 40, 32}) || !slices.Equal(inter.OutputShape, []int{48, 40, 32, 2}) {
		t.Fatalf("layouts %q and %q, outputs %v and %v", s.Options.BankLayout, inter.Options.BankLayout, s.OutputShape, inter.OutputShape)
	}
	// The boxes of a grid of 4×4×4 blocks (this output is one shard, so
	// its own grid is one block).
	g, gi := *s, *inter
	g.Block, g.Grid, gi.Block, gi.Grid = []int{12, 10, 8}, []int{4, 4, 4}, []int{12, 10, 8}, []int{4, 4, 4}
	for i := range g.Blocks() {
		start, shape := g.Box(i)
		is, ish := gi.Box(i)
		if start[0] != 0 || shape[0] != 2 || !slices.Equal(start[1:], is[:3]) || !slices.Equal(shape[1:], ish[:3]) || is[3] != 0 || ish[3] != 2 || i == 63 && !slices.Equal(start, []int{0, 36, 30, 24}) {
			t.Fatalf("block %d: planar box %v %v, interleaved %v %v", i, start, shape, is, ish)
		}
	}
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil || p.Options.BankLayout != "planar" {
		t.Fatalf("parsed: %v, layout %q", err, p.Options.BankLayout)
	}
	// A layout that is not planar, hashed anew to reach the options' check.
	var q Spec
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	q.Options.BankLayout = "nchw"
	q.Hash, _ = q.hash()
	edited, _ := json.Marshal(&q)
	var pe *PlanError
	if _, err := Parse(edited); !errors.As(err, &pe) || !strings.Contains(err.Error(), "bank_layout") {
		t.Errorf("a plan with bank_layout nchw: %v, want a *PlanError naming bank_layout", err)
	}
	runAll(t, s)
	want, err := ndconv.ApplyFilters(ctx, ndconv.Correlation, j.src,
		ndconv.Options{Border: ndconv.Wrap, Device: "cpu", Method: ndconv.Direct, BankLayout: ndconv.Planar},
		ndconv.KernelFilter("k", j.kernel), ndconv.KernelFilter("box", k2))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, zarr.NewDirStore(filepath.Join(j.dir, "planar.zarr"))); !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("the planar job's output %v differs from the whole planar output %v", got.Shape, want.Shape)
	}
	if done, total, err := Status(ctx, s); err != nil || done != total {
		t.Errorf("status %d/%d, %v", done, total, err)
	}

	// From an OME-Zarr level (z, y, x), the output is a level too, its
	// bank the channel axis "c" first; Status finds the array in it.
	ome := zarr.NewDirStore(filepath.Join(j.dir, "ome.zarr"))
	level, err := zarr.Create(ctx, ome, "0", zarr.Meta{Shape: j.src.Shape, DType: nd.Float32, ChunkShape: []int{12, 10, 8}, Compressor: zarr.Compressor{Name: "zstd"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := level.WriteRegion(ctx, []int{0, 0, 0}, j.src); err != nil {
		t.Fatal(err)
	}
	axes := []zarr.Axis{{Name: "z", Type: "space"}, {Name: "y", Type: "space"}, {Name: "x", Type: "space"}}
	if err := zarr.WriteMultiscale(ctx, ome, "", 3, zarr.Multiscale{Axes: axes, Datasets: []zarr.Dataset{{Path: "0", Scale: []float64{2, 1, 1}}}}); err != nil {
		t.Fatal(err)
	}
	c := config("ome-out.zarr", ndconv.Planar)
	c.Input = filepath.Join(j.dir, "ome.zarr", "0")
	os2, err := New(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer os2.Close()
	runAll(t, os2)
	out := zarr.NewDirStore(filepath.Join(j.dir, "ome-out.zarr"))
	ms, err := zarr.ReadMultiscales(ctx, out, "")
	if err != nil || len(ms) != 1 || len(ms[0].Axes) != 4 || ms[0].Axes[0].Type != "channel" || !slices.Equal(ms[0].Datasets[0].Scale, []float64{1, 2, 1, 1}) {
		t.Fatalf("the planar bank's multiscales from an OME level: %+v, %v", ms, err)
	}
	if done, total, err := Status(ctx, os2); err != nil || done != total {
		t.Errorf("OME output: status %d/%d, %v", done, total, err)
	}
	arr, err := zarr.Open(ctx, out, "0")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := arr.ReadAll(ctx); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("the OME output's array differs from the whole planar output: %v", err)
	}
}

// runAll creates s's output and runs every block of it.
func runAll(t *testing.T, s *Spec) {
	t.Helper()
	ctx := context.Background()
	if err := s.Create(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
}
