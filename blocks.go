package ndconv

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// BlockSource reads regions of an input for ExecuteBlocks (chunk.Source):
// ReadRegion(start, shape, dst) fills dst with the box of shape at start.
type BlockSource = chunk.Source

// BlockSink writes regions of an output for ExecuteBlocks (chunk.Sink):
// WriteRegion(start, src) puts src at start, the bank axis included.
type BlockSink = chunk.Sink

// ArraySource reads regions of an array in memory or mapped from a file.
type ArraySource = chunk.ArraySource

// ArraySink writes regions into an array in memory or mapped to a file.
type ArraySink = chunk.ArraySink

// BlockOptions shape ExecuteBlocks' blocks.
type BlockOptions struct {
	// Shape is a block's output extent per axis (without the bank axis);
	// nil chooses the largest blocks within Bytes (chunk.GridFor).
	Shape []int
	// Bytes bounds a block's input (halo included) and output when Shape
	// is nil; 0 means DefaultBlockBytes.
	Bytes int64
	// Align, when Shape is nil, makes every block's extent a multiple of
	// these (one per output axis: a storage's chunks or shards), so that
	// each block writes whole storage chunks, once.
	Align []int
	// InFlight is the number of blocks computed at once, each on a
	// goroutine of its own with its own buffers; 0 means
	// DefaultInFlight(devices).
	InFlight int
	// Devices spreads the blocks over several devices: a list as
	// ParseDevices takes it ("cuda:all", "cuda:0,cuda:1",
	// "opencl:all"); empty, the plan's own device. Worker w computes on
	// device w mod len(Devices), each taking the next block as it frees
	// up, so a slower device takes fewer; a block that fails on one device
	// is tried once on the next before the failure is reported. Every
	// device runs the plan's method, so the output is one device's, bit
	// for bit, for the exact methods.
	Devices string
	// Skip, when not nil, names blocks to leave out: block i is not read,
	// computed or written when Skip(i) is true (a resumed run's blocks
	// whose output is stored whole already). It is called from the
	// workers, at once.
	Skip func(i int) bool
	// Computed, when not nil, is called after block i is computed, with
	// the time its computation took (not its reading or writing), from
	// the worker that computed it, so that a caller can tell where the
	// time went.
	Computed func(i int, d time.Duration)
}

// DefaultInFlight is the blocks ExecuteBlocks computes at once on n
// devices when BlockOptions.InFlight is 0: two per device, so that one
// block is read or written while another computes, and at least half the
// host's cores (at most 8) where it has more, because gathering a block's
// boxes and scattering its output run on the block's goroutine. Measured
// on a 64-core host (docs/perf/streaming.md, session 28): one GPU from
// host memory at 1.96 GB/s with 2 in flight, 4.09 with 8, 4.52 with 16.
func DefaultInFlight(n int) int {
	return max(2*n, min(8, runtime.NumCPU()/2))
}

// DefaultBlockBytes is ExecuteBlocks' budget per block when none is given.
const DefaultBlockBytes = 64 << 20

// ExecuteBlocks filters the plan's input block by block: N-D blocks on
// every axis (chunk.Grid), each read from src as the boxes of the input it
// needs (its halo is the kernel's reach; at the volume's edges the border
// rule maps rows, wrap reading the far side), computed with the plan's
// device and method on a sub-problem of its own, and written to sink
// whole, once. Host memory holds InFlight blocks' input and output,
// whatever the volume. The blocks put together equal Execute's output bit
// for bit for the exact methods (direct, separable); FFT blocks agree
// within the FFT's bound, Winograd blocks within the Winograd bound (a
// block's tiles start at its own first output). A block is a pure function of the plan and its
// index, so a re-run block writes the same bytes. Progress, when the plan
// has one, counts blocks; ctx is checked before each block, and the first
// error stops the rest (blocks already written stay written).
//
// A planar bank (Options.BankLayout) reaches sink with its kernel axis
// first: each block's output box is (K, …box…) at (0, …start…), moved
// there by nd.ToPlanar from the interleaved box its engine writes.
func (p *Plan) ExecuteBlocks(ctx context.Context, src BlockSource, sink BlockSink, bo BlockOptions) error {
	if err := p.ready(); err != nil {
		return err
	}
	if err := checkContext(ctx); err != nil {
		return err
	}
	if src == nil || sink == nil {
		return &nd.ArgumentError{Arg: "blocks", Msg: "a nil source or sink"}
	}
	if bo.InFlight < 0 || bo.Bytes < 0 {
		return &nd.ArgumentError{Arg: "blocks", Msg: fmt.Sprintf("negative InFlight %d or Bytes %d", bo.InFlight, bo.Bytes)}
	}
	if p.exec.Closed() {
		return ErrClosed
	}
	if p.planar != nil {
		sink = &planarSink{sink: sink, bank: len(p.problem.Kernels)}
	}
	g, err := p.Grid(bo)
	if err != nil {
		return err
	}
	devices := []plan.Device{p.exec.Device}
	if bo.Devices != "" {
		if devices, err = plan.ParseDevices(bo.Devices); err != nil {
			return err
		}
	}
	p.held.hold(devices, p.exec.Device)
	inFlight := bo.InFlight
	if inFlight == 0 {
		inFlight = DefaultInFlight(len(devices))
	}
	// Every block runs the whole plan's method: a method chosen anew for a
	// block's shape could add the products differently.
	opt := p.opt
	opt.Method, opt.Progress = p.exec.Method, nil
	opt.Planar = false // a block is computed interleaved; planarSink moves it
	// The executables (engines: device memory, pinned staging, streams,
	// kernels) are shared: a worker takes one of its block's geometry on
	// its device from the pool, or makes one while fewer than perDevice
	// exist there, else waits for one to come free. A block spends most
	// of its time reading and writing, so a few engines serve 8 workers;
	// one each made the first blocks wait for 8 engines' allocations at
	// once, which the driver serialises (0.6 s for cuda:0 on the 4×H200
	// host, session 33's execution trace).
	pool := &enginePool{opt: opt, perDevice: max(2, inFlight/len(devices)/2)}
	defer pool.close()
	// run computes block b on device d with an executable from the pool.
	run := func(ctx context.Context, d plan.Device, b *chunk.Block, dst, src nd.Array) error {
		e, err := pool.get(ctx, d, b.Problem)
		if err != nil {
			return err
		}
		defer pool.put(e)
		defer blockTrace.add("execute", time.Now())
		return e.exec.Execute(ctx, dst, src)
	}
	return chunk.RunBlocksSkip(ctx, g, src, sink, inFlight, p.opt.Progress, bo.Skip, func(ctx context.Context, w int, b *chunk.Block, dst, src nd.Array) error {
		d := devices[w%len(devices)]
		start := time.Now()
		err := run(ctx, d, b, dst, src)
		if err != nil && len(devices) > 1 && ctx.Err() == nil {
			// Once more on the next device, then the failure is the block's.
			next := devices[(w+1)%len(devices)]
			if retry := run(ctx, next, b, dst, src); retry != nil {
				return fmt.Errorf("on %v: %w; again on %v: %w", d, err, next, retry)
			}
			err = nil
		}
		if err == nil && bo.Computed != nil {
			bo.Computed(b.Index, time.Since(start))
		}
		return err
	})
}

// planarSink writes a planar bank's blocks to sink: each block's output,
// interleaved (…box…, K) as the engines write it, moved by nd.ToPlanar
// into a buffer of the same size and written as (K, …box…) at the start
// with the kernel axis first. Buffers are reused from block to block
// (the sink does not keep src past its call); blocks of one size are
// the rule, edge blocks the exception.
type planarSink struct {
	sink BlockSink
	bank int
	bufs sync.Pool // *nd.Array, any shape
}

func (s *planarSink) WriteRegion(start []int, src nd.Array) error {
	n := len(src.Shape)
	if n == 0 || len(start) != n || src.Shape[n-1] != s.bank {
		return &nd.ArgumentError{Arg: "blocks", Msg: fmt.Sprintf("a planar bank's block %v at %v: not a box of the output with its %d kernels last", src.Shape, start, s.bank)}
	}
	shape := append([]int{s.bank}, src.Shape[:n-1]...)
	dst, _ := s.bufs.Get().(*nd.Array)
	if dst == nil || dst.DType() != src.DType() || dst.Len() < src.Len() {
		a, err := nd.New(src.DType(), src.Len())
		if err != nil {
			return err
		}
		dst = &a
	}
	defer s.bufs.Put(dst)
	planar := nd.Array{Shape: shape, Data: nd.SliceData(dst.Data, 0, src.Len())}
	if err := nd.ToPlanar(planar, src, s.bank, 1); err != nil {
		return err
	}
	return s.sink.WriteRegion(append([]int{start[n-1]}, start[:n-1]...), planar)
}

// enginePool keeps ExecuteBlocks' executables by device and block
// geometry (inner blocks, and those at an edge or corner), for whichever
// worker computes such a block next: at most perDevice of one geometry on
// a device, and the last keptGeometries geometries of a device, so that
// alternating geometries do not make engines anew.
type enginePool struct {
	opt       plan.Options
	perDevice int
	mu        sync.Mutex
	kinds     []*engineKind // least recently used first
	dropped   []*engineKind // evicted, with executables still in use
}

// keptGeometries is the geometries a device keeps engines of.
const keptGeometries = 4

// engineKind is the executables of one geometry on one device: free ones
// in free, made ones counted in made (free or in use).
type engineKind struct {
	device  plan.Device
	problem *nd.Problem
	free    chan *plan.Executable
	made    int
	waiting int  // workers waiting for one to come free
	dropped bool // evicted: executables put back are closed, but to a waiter
}

// poolEngine is an executable taken from the pool, with its kind.
type poolEngine struct {
	exec *plan.Executable
	kind *engineKind
}

// get returns an executable for problem's geometry on d: a free one, a
// new one while fewer than perDevice are made, or the next to come free.
func (p *enginePool) get(ctx context.Context, d plan.Device, problem *nd.Problem) (poolEngine, error) {
	p.mu.Lock()
	k := p.kind(d, problem)
	select {
	case e := <-k.free:
		p.mu.Unlock()
		return poolEngine{e, k}, nil
	default:
	}
	if k.made < p.perDevice {
		k.made++
		p.mu.Unlock()
		o := p.opt
		o.Device = d
		made := time.Now()
		e, err := plan.New(problem, o)
		if err != nil {
			p.mu.Lock()
			k.made--
			p.mu.Unlock()
			return poolEngine{}, err
		}
		blockTrace.add("new", made)
		return poolEngine{e, k}, nil
	}
	k.waiting++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		k.waiting--
		p.mu.Unlock()
	}()
	select {
	case e := <-k.free:
		return poolEngine{e, k}, nil
	case <-ctx.Done():
		return poolEngine{}, context.Cause(ctx)
	}
}

// kind finds or adds the kind of problem's geometry on d, most recently
// used now, dropping the least recently used of d's beyond keptGeometries
// (under p.mu).
func (p *enginePool) kind(d plan.Device, problem *nd.Problem) *engineKind {
	i := slices.IndexFunc(p.kinds, func(k *engineKind) bool {
		return k.device == d && chunk.SameGeometry(k.problem, problem)
	})
	var k *engineKind
	if i >= 0 {
		k = p.kinds[i]
		p.kinds = slices.Delete(p.kinds, i, i+1)
	} else {
		k = &engineKind{device: d, problem: problem, free: make(chan *plan.Executable, p.perDevice)}
		n := 0
		for _, o := range p.kinds {
			if o.device == d {
				n++
			}
		}
		for j := 0; n >= keptGeometries && j < len(p.kinds); j++ {
			if o := p.kinds[j]; o.device == d {
				p.drop(o)
				p.dropped = append(p.dropped, o)
				p.kinds = slices.Delete(p.kinds, j, j+1)
				n--
				j--
			}
		}
	}
	p.kinds = append(p.kinds, k)
	return k
}

// drop closes k's free executables and marks it so that those in use
// are closed when put back (under p.mu).
func (p *enginePool) drop(k *engineKind) {
	k.dropped = true
	for {
		select {
		case e := <-k.free:
			e.Close()
		default:
			return
		}
	}
}

// put gives e back to the pool (or closes it, its kind dropped).
func (p *enginePool) put(e poolEngine) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.kind.dropped && e.kind.waiting == 0 {
		e.exec.Close()
		return
	}
	e.kind.free <- e.exec // room: at most perDevice are made
}

// close closes every executable put back.
func (p *enginePool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range slices.Concat(p.kinds, p.dropped) {
		p.drop(k)
	}
	p.kinds, p.dropped = nil, nil
}

// heldDevices are the GPUs a plan's ExecuteBlocks spread blocks over,
// other than its own, opened all at once in the background at the first
// call and held until the plan's Close. Each worker's executables open and
// close their device as block geometries come and go; were nothing else
// holding it, a device's last executable closing would release its
// context, and every call would create it again (about 0.35 s on the H100
// host) — which made cuda:all slower than cuda:0 alone (2 × H200, 1024³
// in 256³ blocks: 0.8–0.9 s against 0.45).
type heldDevices struct {
	mu    sync.Mutex
	warms map[plan.Device]*plan.Warm
}

// hold starts opening every GPU of devices but own (the plan's, which it
// holds itself) not held yet.
func (h *heldDevices) hold(devices []plan.Device, own plan.Device) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range devices {
		if !d.GPU() || d == own || h.warms[d] != nil {
			continue
		}
		if h.warms == nil {
			h.warms = map[plan.Device]*plan.Warm{}
		}
		h.warms[d] = plan.Prewarm(d)
	}
}

// close lets go of the devices held.
func (h *heldDevices) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, w := range h.warms {
		errs = append(errs, w.Close())
	}
	h.warms = nil
	return errors.Join(errs...)
}

// blockTrace, when a test sets it, is told how long each block's
// executable took to make and to run (TestBlocksDeviceScaling's split of
// the time).
var blockTrace traceFunc

type traceFunc func(stage string, d time.Duration)

func (f traceFunc) add(stage string, since time.Time) {
	if f != nil {
		f(stage, time.Since(since))
	}
}

// Grid is the grid of blocks ExecuteBlocks cuts the plan's output into
// with bo: a block's output box, input rows and sub-problem are
// Grid(bo).Block(i).
func (p *Plan) Grid(bo BlockOptions) (*chunk.Grid, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	if bo.Shape != nil {
		return chunk.NewGrid(p.problem, slices.Clone(bo.Shape))
	}
	bytes := bo.Bytes
	if bytes == 0 {
		bytes = DefaultBlockBytes
	}
	return chunk.GridFor(p.problem, bytes, bo.Align)
}

// ExecuteBlocks is Plan.ExecuteBlocks for filters that run as one kernel
// bank (every filter of one term and one kernel shape). Filters of
// several terms (gradient magnitude, Laplacian of Gaussian) are an
// *nd.UnsupportedError: stream them with ExecuteChunks.
func (fp *FilterPlan) ExecuteBlocks(ctx context.Context, src BlockSource, sink BlockSink, bo BlockOptions) error {
	if fp == nil || fp.bank == nil && len(fp.terms) == 0 {
		return errNoFilterPlan
	}
	if fp.bank == nil {
		return errTermsBlocks
	}
	return fp.bank.ExecuteBlocks(ctx, src, sink, bo)
}

// Grid is Plan.Grid for filters that run as one kernel bank.
func (fp *FilterPlan) Grid(bo BlockOptions) (*chunk.Grid, error) {
	if fp == nil || fp.bank == nil && len(fp.terms) == 0 {
		return nil, errNoFilterPlan
	}
	if fp.bank == nil {
		return nil, errTermsBlocks
	}
	return fp.bank.Grid(bo)
}

// Blocked reports whether ExecuteBlocks can run the filters: those that
// run as one kernel bank.
func (fp *FilterPlan) Blocked() bool { return fp != nil && fp.bank != nil }

var errTermsBlocks = &nd.UnsupportedError{What: "blocks", Value: "filters of several terms", Supported: "filters of one term each (kernels, gaussian, uniform, …); stream the others with ExecuteChunks"}
