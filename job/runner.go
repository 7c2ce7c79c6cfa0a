package job

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// CreateMode says what CreateWith does with an array already at the
// output.
type CreateMode int

const (
	// KeepPlan keeps an array this plan created (its hash recorded) with
	// its shards, and refuses any other: Create's mode, for the workers of
	// one plan.
	KeepPlan CreateMode = iota
	// Replace removes what the output holds and creates the array anew:
	// a run from scratch.
	Replace
	// KeepLayout keeps an array of the plan's shape, dtype and shards
	// whatever created it, and creates one otherwise (ndconv correlate
	// --resume, whose tasks plan each on their own).
	KeepLayout
)

// Create creates the output array's metadata, recording the plan's hash
// in its attributes, before any block: once, since an array this plan
// created is kept with its shards. An array that another plan (or none)
// created is a *MismatchError, and is left alone.
func (s *Spec) Create(ctx context.Context) error {
	_, err := s.create(ctx, KeepPlan)
	return err
}

// CreateWith is Create with another mode.
func (s *Spec) CreateWith(ctx context.Context, mode CreateMode) error {
	_, err := s.create(ctx, mode)
	return err
}

// raw is the RawOptions that open the plan's input.
func (s *Spec) raw() imageio.RawOptions {
	dt, _ := nd.ParseDType(s.InputDType) // checked by Parse and New
	return imageio.RawOptions{Shape: slices.Clone(s.InputShape), DType: dt}
}

// openInput opens the plan's input and checks that it is the input
// planned.
func (s *Spec) openInput(ctx context.Context) (*input, error) {
	in, err := openInput(ctx, s.Input, s.raw())
	if err != nil {
		return nil, err
	}
	if !slices.Equal(in.shape, s.InputShape) || in.dtype.String() != s.InputDType {
		in.close()
		return nil, fmt.Errorf("job: input %s is %v %v; the plan was made for %v %v", s.Input, in.dtype, in.shape, s.InputDType, s.InputShape)
	}
	return in, nil
}

func (s *Spec) create(ctx context.Context, mode CreateMode) (*zarr.Array, error) {
	in, err := s.openInput(ctx)
	if err != nil {
		return nil, err
	}
	in.close() // its metadata is all Create needs
	dt, _ := nd.ParseDType(s.OutputDType)
	layout := imageio.ZarrLayout(s.OutputShape, dt, in.meta)
	if !slices.Equal(imageio.ZarrShardShape(layout), s.Shards) {
		return nil, fmt.Errorf("job: input %s is now stored in shards that give the output %v; the plan has %v: plan again", s.Input, imageio.ZarrShardShape(layout), s.Shards)
	}
	// The workers check the hash; the other modes' callers made the plan
	// themselves, and write the metadata a run without a plan writes (no
	// hash, not even an input's that a plan wrote).
	attrs := maps.Clone(layout.Attributes)
	delete(attrs, HashAttribute)
	if mode == KeepPlan {
		if attrs == nil {
			attrs = map[string]json.RawMessage{}
		}
		attrs[HashAttribute], _ = json.Marshal(s.Hash)
	}
	layout.Attributes = attrs
	zm := &imageio.ZarrMeta{Array: layout}
	if in.meta.Zarr != nil {
		zm.Level = in.meta.Zarr.Level
	}
	if mode == KeepPlan {
		a, err := s.openOutput(ctx, false)
		if err == nil {
			return a, nil
		}
		var mismatch *MismatchError
		if errors.As(err, &mismatch) || !notFound(err) {
			return nil, err
		}
	}
	a, err := imageio.CreateZarr(ctx, s.Output, s.OutputShape, dt, imageio.WriteOptions{Meta: imageio.Meta{Zarr: zm}, BankFirst: s.bankAxis() == 0}, mode == KeepLayout)
	if err != nil && mode != Replace {
		// Another process (a task of the same job) created it meanwhile.
		if b, again := s.openOutput(ctx, mode == KeepLayout); again == nil {
			return b, nil
		}
	}
	return a, err
}

// notFound reports whether err says that no array is there.
func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, zarr.ErrNotFound)
}

// arrayLoc is where the output array itself is: the output, or for an
// output that is an OME-Zarr group (from an input that was a level) its
// array "0", where imageio.CreateZarr puts it.
func (s *Spec) arrayLoc(ctx context.Context) string {
	if !strings.HasSuffix(strings.ToLower(lastPart(s.Output)), ".zarr") {
		return s.Output
	}
	in, err := openInput(ctx, s.Input, s.raw())
	if err != nil {
		return s.Output
	}
	in.close()
	if _, ok := imageio.OutputLevel(in.meta.Zarr, s.OutputShape, s.bankAxis() == 0); !ok {
		return s.Output
	}
	if blobstore.IsURL(s.Output) {
		if u, err := url.Parse(s.Output); err == nil {
			u.Path = path.Join(u.Path, "0")
			return u.String()
		}
	}
	return filepath.Join(s.Output, "0")
}

// lastPart is the last component of a path or a URL's path.
func lastPart(loc string) string {
	if blobstore.IsURL(loc) {
		if u, err := url.Parse(loc); err == nil {
			loc = u.Path
		}
	}
	return path.Base(filepath.ToSlash(strings.TrimRight(loc, "/")))
}

// recordedHash is the plan hash in a's attributes, or "".
func recordedHash(a *zarr.Array) string {
	var h string
	if raw, ok := a.Meta().Attributes[HashAttribute]; ok {
		_ = json.Unmarshal(raw, &h)
	}
	return h
}

// openOutput opens the output array and checks that it is the plan's:
// its hash (unless anyPlan), shape, dtype and shards.
func (s *Spec) openOutput(ctx context.Context, anyPlan bool) (*zarr.Array, error) {
	loc := s.arrayLoc(ctx)
	a, _, err := imageio.OpenZarr(ctx, loc)
	if err != nil {
		return nil, err
	}
	if h := recordedHash(a); !anyPlan && h != s.Hash {
		return nil, &MismatchError{Output: s.Output, Have: h, Want: s.Hash}
	}
	if !slices.Equal(a.Shape(), s.OutputShape) || a.DType().String() != s.OutputDType || !slices.Equal(a.ShardShape(), s.Shards) {
		return nil, fmt.Errorf("job: output %s is %v %v in shards of %v; the plan writes %v %v in shards of %v",
			s.Output, a.DType(), a.Shape(), a.ShardShape(), s.OutputDType, s.OutputShape, s.Shards)
	}
	return a, nil
}

// RunOptions tune a Runner; none changes what it writes.
type RunOptions struct {
	// InFlight is the blocks computed at once (0: ndconv.DefaultInFlight), Devices
	// a list of devices that share them (ndconv.BlockOptions).
	InFlight int
	Devices  string
	// CacheBytes bounds a Zarr input's chunks kept decoded (0: room for
	// those that wait for a later block, from DefaultCacheBytes to 1 GiB).
	CacheBytes int64
	// Progress receives the blocks done, of all the grid's.
	Progress ndconv.Progress
	// Stats, when not nil, counts the time and bytes of each stage.
	Stats *Stats
	// AnyPlan opens an output whatever plan created it (one of the same
	// layout): for CreateWith's Replace and KeepLayout modes, whose
	// callers made the array themselves.
	AnyPlan bool
	// Before and After are the Sink's hooks (tests).
	Before func()
	After  func(n int64)
}

// Runner computes blocks of a plan: its input and output open, its
// filters planned. Its methods may be called one at a time.
type Runner struct {
	s     *Spec
	p     *ndconv.FilterPlan
	in    *input
	src   *source
	sink  *Sink
	o     RunOptions
	stats *Stats
}

// Open opens the plan's input and output (refusing an output whose
// recorded hash is not the plan's) and plans its filters, for Run.
func (s *Spec) Open(ctx context.Context) (*Runner, error) { return s.OpenWith(ctx, RunOptions{}) }

// OpenWith is Open with options.
func (s *Spec) OpenWith(ctx context.Context, o RunOptions) (_ *Runner, err error) {
	out, err := s.openOutput(ctx, o.AnyPlan)
	if err != nil {
		return nil, err
	}
	r := &Runner{s: s, o: o, stats: o.Stats}
	if r.stats == nil {
		r.stats = &Stats{}
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.in, err = s.openInput(ctx); err != nil {
		return nil, err
	}
	r.p, s.plan = s.plan, nil
	if r.p == nil {
		op, _ := s.op()
		opt, err := s.options()
		if err != nil {
			return nil, err
		}
		fs, err := s.filters()
		if err != nil {
			return nil, err
		}
		opt.Progress = o.Progress
		if r.p, err = ndconv.NewFilterPlan(op, s.InputShape, r.in.dtype, opt, fs...); err != nil {
			return nil, err
		}
	}
	if !slices.Equal(r.p.Shape(), s.OutputShape) || r.p.DType().String() != s.OutputDType || r.p.Method() != s.Options.Method {
		return nil, fmt.Errorf("job: this ndconv plans the filters as %v %v by %s; the plan says %v %v by %s",
			r.p.DType(), r.p.Shape(), r.p.Method(), s.OutputDType, s.OutputShape, s.Options.Method)
	}
	g, err := r.p.Grid(ndconv.BlockOptions{Shape: s.Block})
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Counts(), s.Grid) {
		return nil, fmt.Errorf("job: blocks of %v make a grid of %v here; the plan has %v", s.Block, g.Counts(), s.Grid)
	}
	r.src = &source{ctx: ctx, array: chunk.ArraySource{}, stats: r.stats}
	if r.in.zarr != nil {
		opt, _ := s.options()
		budget := o.CacheBytes
		if budget == 0 {
			inFlight := o.InFlight
			if inFlight == 0 {
				inFlight = ndconv.DefaultInFlight(1)
			}
			budget = cacheBudget(g, r.in.zarr.ChunkShape(), r.in.zarr.DType().Size(), inFlight)
		}
		r.src.zarr = NewChunkCache(r.in.zarr, halo(s.Filters, opt.Origin), budget)
		r.src.zarr.SetBoxEdges(boxEdges(g))
	} else {
		r.src.array = chunk.ArraySource{Array: r.in.mapped.Array}
	}
	stored, err := StoredKeys(ctx, out)
	if err != nil {
		return nil, err
	}
	r.sink = NewSink(ctx, out, stored, r.stats)
	r.sink.Before, r.sink.After = o.Before, o.After
	return r, nil
}

// maxCacheBytes bounds the budget cacheBudget chooses.
const maxCacheBytes = 1 << 30

// cacheBudget is a Zarr input's chunk cache budget where none is given:
// room for the chunks kept whole for blocks still to come, twice over
// (their shells beside them), within [DefaultCacheBytes, maxCacheBytes].
// Blocks run in C order, so a block's halo decodes the chunks past its
// high face along the slowest axis of several blocks, which the block
// there reads whole a slab of blocks later: a slab's faces of chunks
// wait at once, and more while inFlight blocks run. (2048³ uint8 in 1 MiB
// chunks, blocks of 4 chunks a side: 24 faces of 16 chunks; the 384 MiB
// of before made 56% of the chunks decode twice.)
func cacheBudget(g *chunk.Grid, unit []int, elemSize, inFlight int) int64 {
	counts, block := g.Counts(), g.Shape()
	if len(unit) != len(counts) {
		return DefaultCacheBytes
	}
	d := slices.IndexFunc(counts, func(n int) bool { return n > 1 })
	if d < 0 {
		return DefaultCacheBytes // one block: nothing waits
	}
	waiting := prod(counts[d+1:]) + max(inFlight, 1)
	chunkBytes := int64(prod(unit) * elemSize)
	face := int64(1)
	for e := range counts {
		if e != d {
			face *= int64((block[e] + unit[e] - 1) / unit[e])
		}
	}
	return min(max(2*int64(waiting)*face*chunkBytes, DefaultCacheBytes), maxCacheBytes)
}

// boxEdges lists, per axis and in increasing order, the rows of the input
// where the grid's blocks' input boxes begin and end (ChunkCache.SetBoxEdges).
// A block's rows along an axis depend on its place along that axis alone.
func boxEdges(g *chunk.Grid) (starts, ends [][]int) {
	counts := g.Counts()
	in := g.Problem().InShape
	if len(in) != len(counts) {
		return nil, nil
	}
	starts, ends = make([][]int, len(counts)), make([][]int, len(counts))
	stride := 1
	for d := len(counts) - 1; d >= 0; d-- {
		for j := range counts[d] {
			b := g.Block(j * stride)
			rows := b.Rows[d]
			if rows == nil {
				rows = chunk.Rows{{First: 0, N: in[d]}}
			}
			for _, r := range rows {
				starts[d] = append(starts[d], r.First)
				ends[d] = append(ends[d], r.First+r.N)
			}
		}
		slices.Sort(starts[d])
		slices.Sort(ends[d])
		starts[d], ends[d] = slices.Compact(starts[d]), slices.Compact(ends[d])
		stride *= counts[d]
	}
	return starts, ends
}

// halo is the most rows a block's halo reaches past its output on any
// axis, on either side: half a kernel's extent where no origin shifts it
// (scipy's centre, K/2 before and K−1−K/2 after), else its extent less
// one.
func halo(fs []Filter, origin []int) int {
	shifted := slices.ContainsFunc(origin, func(o int) bool { return o != 0 })
	h := 0
	for _, f := range fs {
		for _, n := range f.Shape {
			if shifted {
				h = max(h, n-1)
			} else {
				h = max(h, n/2)
			}
		}
	}
	return h
}

// source reads regions from a Zarr array (through its cache) or a mapped
// file, counting the time and bytes.
type source struct {
	ctx   context.Context
	zarr  *ChunkCache
	array chunk.ArraySource
	stats *Stats
}

func (s *source) ReadRegion(start, shape []int, dst nd.Array) error {
	t := time.Now()
	defer s.stats.add(&s.stats.Read, t)
	s.stats.In.Add(int64(len(dst.Bytes())))
	if s.zarr != nil {
		return s.zarr.ReadRegion(s.ctx, start, shape, dst)
	}
	return s.array.ReadRegion(start, shape, dst)
}

// ReadRegionAt implements chunk.BoxSource.
func (s *source) ReadRegionAt(start, shape []int, dst nd.Array, at []int) error {
	t := time.Now()
	defer s.stats.add(&s.stats.Read, t)
	s.stats.In.Add(int64(prod(shape) * dst.DType().Size()))
	if s.zarr != nil {
		return s.zarr.ReadRegionAt(s.ctx, start, shape, dst, at)
	}
	return s.array.ReadRegionAt(start, shape, dst, at)
}

// Run computes block i and writes it whole; a block whose shards are all
// stored is skipped. Run again, it writes the same bytes.
func (r *Runner) Run(ctx context.Context, i int) error {
	if i < 0 || i >= r.s.Blocks() {
		return &nd.ArgumentError{Arg: "block", Msg: fmt.Sprintf("%d is not a block of the plan's %d", i, r.s.Blocks())}
	}
	return r.run(ctx, func(j int) bool { return j == i })
}

// RunShare runs a worker's share when count workers run the plan: the
// index-th of count contiguous runs of the blocks taken in Z order (by
// the Morton key of their grid position: blocks [index·n/count,
// (index+1)·n/count) of that order), so that each worker's blocks make a
// compact region. Neighbouring blocks read the same input chunks at
// their edges; within a share they fall to one worker's chunk cache, and
// between shares the fewer the faces, the fewer chunks two workers both
// decode (8 workers of a 4×4×4 grid take octants, whose halos touch 61
// chunks of 64³ each instead of the 100 of half a slab of blocks).
func (r *Runner) RunShare(ctx context.Context, index, count int) error {
	if count < 1 || index < 0 || index >= count {
		return &nd.ArgumentError{Arg: "share", Msg: fmt.Sprintf("index %d of %d workers: want 0 ≤ index < count", index, count)}
	}
	in := make(map[int]bool)
	for _, i := range r.s.Share(index, count) {
		in[i] = true
	}
	return r.run(ctx, func(j int) bool { return in[j] })
}

// Share lists the blocks of the index-th of count workers' shares
// (RunShare), in increasing order; nil for an index out of range.
func (s *Spec) Share(index, count int) []int {
	if count < 1 || index < 0 || index >= count {
		return nil
	}
	rank := zOrderRanks(s.Grid)
	n := len(rank)
	lo, hi := index*n/count, (index+1)*n/count
	var share []int
	for i, r := range rank {
		if lo <= r && r < hi {
			share = append(share, i)
		}
	}
	return share
}

// zOrderRanks returns each block's position (by its C-order index in a
// grid of counts) when the blocks are sorted by their Morton keys: the
// bits of their coordinates interleaved, the lowest bit of every axis
// first, the first axis the most significant of each group.
func zOrderRanks(counts []int) []int {
	n := 1
	for _, c := range counts {
		n *= c
	}
	keys := make([]uint64, n)
	coord := make([]int, len(counts))
	per := 64 / max(len(counts), 1) // bits of each coordinate in a key
	for i := range n {
		for d, r := len(counts)-1, i; d >= 0; d-- {
			coord[d] = r % counts[d]
			r /= counts[d]
		}
		var key uint64
		for bit := per - 1; bit >= 0; bit-- {
			for _, c := range coord {
				key = key<<1 | uint64(c>>bit&1)
			}
		}
		keys[i] = key
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	rank := make([]int, n)
	for pos, i := range order {
		rank[i] = pos
	}
	return rank
}

// RunAll runs every block not stored.
func (r *Runner) RunAll(ctx context.Context) error { return r.run(ctx, func(int) bool { return true }) }

// run computes the blocks that pick names and that are not stored whole.
func (r *Runner) run(ctx context.Context, pick func(i int) bool) error {
	if r.p == nil {
		return &nd.ArgumentError{Arg: "runner", Msg: "closed"}
	}
	r.src.ctx, r.sink.ctx = ctx, ctx
	if err := r.removeStale(ctx, pick); err != nil {
		return err
	}
	// The blocks still to come: this run's, not stored whole, not
	// started (the chunk cache keeps whole only the chunks they own).
	todo := make([]atomic.Bool, r.s.Blocks())
	for i := range todo {
		todo[i].Store(pick(i) && !r.sink.Done(r.s.Box(i)))
	}
	if r.src.zarr != nil {
		r.src.zarr.SetOwners(r.owners(todo))
	}
	bo := ndconv.BlockOptions{Shape: r.s.Block, InFlight: r.o.InFlight, Devices: r.o.Devices,
		Computed: func(_ int, d time.Duration) { r.stats.Compute.Add(int64(d)) },
		Skip: func(i int) bool {
			if !pick(i) {
				return true
			}
			if r.sink.Done(r.s.Box(i)) {
				r.stats.Skipped.Add(1)
				return true
			}
			todo[i].Store(false) // it reads its chunks now
			return false
		}}
	return r.p.ExecuteBlocks(ctx, r.src, r.sink, bo)
}

// removeStale removes the temporary files that dead writers left beside
// the shards of the blocks pick names (a worker killed mid-write), stored
// since or not: the run that owns a block again cleans up after the one
// that died. A live writer's file stays (zarr.DirStore.RemoveStale).
func (r *Runner) removeStale(ctx context.Context, pick func(i int) bool) error {
	var starts, shapes [][]int
	for i := range r.s.Blocks() {
		if pick(i) {
			start, shape := r.s.Box(i)
			starts, shapes = append(starts, start), append(shapes, shape)
		}
	}
	n, err := r.sink.a.RemoveStale(ctx, starts, shapes)
	r.stats.Stale.Add(int64(n))
	if err != nil {
		return fmt.Errorf("job: removing the temporary files of dead writers in %s: %w", r.s.Output, err)
	}
	return nil
}

// owners reports, for the chunk cache, whether a block still to come
// (todo) meets the input box at lo of shape: only such a chunk is worth
// keeping whole for its owner's read.
func (r *Runner) owners(todo []atomic.Bool) func(lo, shape []int) bool {
	rank := len(r.s.Block)
	return func(lo, shape []int) bool {
		first, n := make([]int, rank), make([]int, rank)
		total := 1
		for d := range rank {
			first[d] = lo[d] / r.s.Block[d]
			n[d] = (lo[d]+shape[d]-1)/r.s.Block[d] - first[d] + 1
			total *= n[d]
		}
		for k := range total {
			i, stride := 0, 1
			for d, q := rank-1, k; d >= 0; d-- {
				i += (first[d] + q%n[d]) * stride
				stride *= r.s.Grid[d]
				q /= n[d]
			}
			if i < len(todo) && todo[i].Load() {
				return true
			}
		}
		return false
	}
}

// Plan is the runner's filter plan (its method, device, dtype).
func (r *Runner) Plan() *ndconv.FilterPlan { return r.p }

// Cache is the Zarr input's chunk cache, or nil for a mapped file.
func (r *Runner) Cache() *ChunkCache { return r.src.zarr }

// Close releases the plan and the input.
func (r *Runner) Close() error {
	var err error
	if r.p != nil {
		err = r.p.Close()
		r.p = nil
	}
	if r.in != nil {
		r.in.close()
		r.in = nil
	}
	return err
}

// Status counts the blocks stored whole in the plan's output (every
// shard stored, or marked as holding only the fill value), of all the
// grid's: from what is stored, whoever stored it.
func Status(ctx context.Context, s *Spec) (done, total int, err error) {
	a, err := s.openOutput(ctx, false)
	if err != nil {
		return 0, 0, err
	}
	stored, err := StoredKeys(ctx, a)
	if err != nil {
		return 0, 0, err
	}
	sink := NewSink(ctx, a, stored, nil)
	total = s.Blocks()
	for i := range total {
		if sink.Done(s.Box(i)) {
			done++
		}
	}
	return done, total, nil
}
