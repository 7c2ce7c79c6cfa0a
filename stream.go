package ndconv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// ExecuteChunks filters src chunk by chunk (package chunk), each chunk's
// input and output within about budget bytes (raised, up to 16-fold, to
// hold two output rows along axis 0 with their halo: chunks of whole rows
// read src in place, narrower ones gather a copy), and hands each chunk's
// output to sink with its offset in the whole output (in elements, bank
// included), in order: the chunks put together equal Execute's output bit
// for bit for the exact methods (an FFT plan transforms each chunk in
// blocks of its own, so its chunks agree with Execute within the FFT's
// bound, not bit for bit). sink runs on a goroutine of its own, one call
// at a time, while the next chunk computes, so writing a file overlaps the
// filtering; out is valid until sink returns (two output buffers take turns, the same memory
// each time: no fresh pages per chunk, and a GPU backend pins a buffer it
// sees again). Host memory holds two chunks' output (and one's input, where
// the chunk's rows are not contiguous in src) at a time, so src may be a
// memory-mapped file and sink may write a file. On the CPU a separable
// kernel spanning axis 0 and another axis runs its passes within each
// input plane once and its pass along axis 0 chunk by chunk
// (stream_separable.go), holding a chunk's planes of the intermediate per
// kernel besides; its chunks are at least 8 output planes under a budget
// of 1 MiB or more. Progress, when the plan
// has one, counts chunks; ctx is checked between chunks. An empty output
// is one chunk with no element. Each call prepares its own executables, so
// calls on one plan run concurrently; the plan's Close does not wait for
// them, and after it ExecuteChunks is ErrClosed. sink must not be nil. A
// planar bank (Options.BankLayout) is refused with an ArgumentError: its
// chunks would not be runs of the output.
func (p *Plan) ExecuteChunks(ctx context.Context, src Array, budget int64, sink func(offset int, out Array) error) error {
	if err := p.checkChunks(ctx, src, sink); err != nil {
		return err
	}
	st, err := p.stream(src, budget, 0)
	if err != nil {
		return err
	}
	defer st.close()
	w := startChunkWriter(sink)
	err = drive(ctx, st, p.opt.Progress, w.hand)
	if werr := w.close(); werr != nil {
		return werr // the cause, where the sink stopped the chunks
	}
	return err
}

// chunksPath names ExecuteChunks where it refuses a planar bank.
const chunksPath = "ExecuteChunks (row streaming: its chunks are runs of the interleaved output)"

// checkChunks checks ExecuteChunks' arguments.
func (p *Plan) checkChunks(ctx context.Context, src Array, sink func(offset int, out Array) error) error {
	if err := p.ready(); err != nil {
		return err
	}
	if err := checkContext(ctx); err != nil {
		return err
	}
	if sink == nil {
		return &nd.ArgumentError{Arg: "sink", Msg: "a nil sink"}
	}
	if p.exec.Closed() {
		return ErrClosed
	}
	if p.planar != nil {
		return planarRefused(chunksPath)
	}
	if err := src.Check(); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if src.DType() != p.inType || !slices.Equal(src.Shape, p.problem.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", src.DType(), src.Shape, p.inType, p.problem.InShape)}
	}
	return nil
}

// A chunkStream computes a plan's output chunk by chunk, in order: next
// returns the next chunk's offset in the whole output (in elements, bank
// included) and its output, valid until the call after next (two output
// buffers take turns, so a writer may hold one while the next computes).
type chunkStream interface {
	len() int
	next(ctx context.Context) (offset int, out nd.Array, err error)
	close()
}

// stream returns the plan's chunk stream over src: chunks of rows along
// axis 0 when rows > 0 (streams of several plans then have the same
// chunks), else chunks within budget (raised for whole rows, wholeRows).
func (p *Plan) stream(src nd.Array, budget int64, rows int) (chunkStream, error) {
	// Every chunk runs the whole plan's method on its device: a method
	// chosen anew for a chunk's shape could add the products differently.
	opt := p.opt
	opt.Device, opt.Method, opt.Progress = p.exec.Device, p.exec.Method, nil
	if s := newSeparableStream(p.problem, p.exec); s != nil {
		if cs := s.chunks(budget, rows); cs != nil {
			return s.start(cs, src, opt)
		}
	}
	b := chunk.Budget{Bytes: wholeRows(p.problem, budget, p.exec.Device.GPU())}
	if rows > 0 {
		row, _ := nd.ShapeElements(p.problem.OutShape[1:])
		b = chunk.Budget{OutElems: max(rows*row, 1)}
	}
	chunks, err := chunk.Split(p.problem, b)
	if err != nil {
		return nil, err
	}
	return &plainStream{chunks: chunks, src: src, opt: opt, out: p.problem.Out}, nil
}

// drive hands every chunk of st, in order, to hand; it checks ctx between
// chunks and reports chunks done out of the total to progress (may be nil).
func drive(ctx context.Context, st chunkStream, progress nd.Progress, hand func(int, nd.Array) error) error {
	n := st.len()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		off, out, err := st.next(ctx)
		if err != nil {
			if n > 1 {
				return fmt.Errorf("chunk %d of %d: %w", i+1, n, err)
			}
			return err
		}
		if err := hand(off, out); err != nil {
			return err
		}
		if progress != nil {
			progress.Report(int64(i+1), int64(n))
		}
	}
	return nil
}

// plainStream computes each chunk's sub-problem from its rows of the
// whole input: a view where they are one run, else gathered into a buffer
// reused from chunk to chunk.
type plainStream struct {
	chunks []chunk.Chunk
	i      int
	src    nd.Array
	opt    plan.Options
	out    nd.DType
	exec   *plan.Executable // the last chunk's, reused for the same geometry
	buf    any
	outs   [2]nd.Array // the output buffers, taking turns
	turn   int
}

func (s *plainStream) len() int { return len(s.chunks) }

func (s *plainStream) next(ctx context.Context) (int, nd.Array, error) {
	c := &s.chunks[s.i]
	s.i++
	in := c.Input(s.src, s.buf)
	if _, view := c.Span(); !view {
		s.buf = in.Data
	}
	if s.exec == nil || !chunk.SameGeometry(s.exec.Problem, c.Problem) {
		if s.exec != nil {
			s.exec.Close()
			s.exec = nil
		}
		var err error
		if s.exec, err = plan.New(c.Problem, s.opt); err != nil {
			return 0, nd.Array{}, err
		}
	}
	// The writer is done with this turn's buffer: it has taken the chunk
	// after the one it held.
	out, err := reuse(&s.outs[s.turn], s.out, c.Problem.FullShape())
	if err != nil {
		return 0, nd.Array{}, err
	}
	s.turn = 1 - s.turn
	if err := s.exec.Execute(ctx, out, in); err != nil {
		return 0, nd.Array{}, err
	}
	return c.OutOffset, out, nil
}

func (s *plainStream) close() {
	if s.exec != nil {
		s.exec.Close()
	}
}

// reuse returns an array of dt and shape backed by *buf, allocating a
// larger buffer (kept in *buf, shaped as allocated) where it is too small.
func reuse(buf *nd.Array, dt nd.DType, shape []int) (nd.Array, error) {
	n, err := nd.NumElements(shape)
	if err != nil {
		return nd.Array{}, err
	}
	if buf.Data == nil || buf.Len() < n {
		if *buf, err = nd.New(dt, shape...); err != nil {
			return nd.Array{}, err
		}
		return *buf, nil
	}
	return nd.Array{Shape: slices.Clone(shape), Data: nd.SliceData(buf.Data, 0, n)}, nil
}

// chunkWriter calls a sink on a goroutine of its own, one chunk at a
// time, in order. hand blocks until the sink has taken the chunk, which
// means it has finished the one before; after a sink error it takes
// chunks without calling the sink and hand reports the error.
type chunkWriter struct {
	chunks chan handed
	done   chan struct{}
	failed atomic.Bool
	err    error // the sink's first error, read after done
}

type handed struct {
	offset int
	out    nd.Array
}

func startChunkWriter(sink func(offset int, out Array) error) *chunkWriter {
	w := &chunkWriter{chunks: make(chan handed), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for h := range w.chunks {
			if w.err == nil {
				if w.err = sink(h.offset, h.out); w.err != nil {
					w.failed.Store(true)
				}
			}
		}
	}()
	return w
}

func (w *chunkWriter) hand(offset int, out nd.Array) error {
	if w.failed.Load() {
		return errSinkFailed
	}
	w.chunks <- handed{offset, out}
	return nil
}

// close waits for the last chunk and returns the sink's error.
func (w *chunkWriter) close() error {
	close(w.chunks)
	<-w.done
	return w.err
}

// errSinkFailed stops the chunks after the sink's error, which close
// reports.
var errSinkFailed = errors.New("the chunks' sink failed")

// ExecuteChunks is Plan.ExecuteChunks for filters: those that run as one
// kernel bank stream as that bank does; filters of several terms
// (gradient magnitude, Laplacian of Gaussian) stream each filter's terms
// in chunks of the same output rows, combine them and round once, as
// Execute does, so the chunks equal Execute's output bit for bit.
func (fp *FilterPlan) ExecuteChunks(ctx context.Context, src Array, budget int64, sink func(offset int, out Array) error) error {
	if fp == nil || fp.bank == nil && len(fp.terms) == 0 {
		return errNoFilterPlan
	}
	if fp.bank != nil {
		return fp.bank.ExecuteChunks(ctx, src, budget, sink)
	}
	if err := fp.terms[0].checkChunks(ctx, src, sink); err != nil {
		return err
	}
	if fp.planar {
		return planarRefused(chunksPath)
	}
	rows := fp.streamRows(budget)
	streams := make([]chunkStream, len(fp.terms))
	defer func() {
		for _, st := range streams {
			if st != nil {
				st.close()
			}
		}
	}()
	for i, p := range fp.terms {
		var err error
		if streams[i], err = p.stream(src, budget, rows); err != nil {
			return fmt.Errorf("filter %s: %w", fp.filters[i].Name, err)
		}
		if streams[i].len() != streams[0].len() {
			return fmt.Errorf("filter %s: %d chunks, %s %d", fp.filters[i].Name, streams[i].len(), fp.filters[0].Name, streams[0].len())
		}
	}
	w := startChunkWriter(sink)
	err := drive(ctx, &termsStream{fp: fp, streams: streams}, fp.progress, w.hand)
	if werr := w.close(); werr != nil {
		return werr
	}
	return err
}

// streamRows is the output rows along axis 0 a chunk of a filter plan of
// several terms computes within budget: each term plan's output in float
// (two buffers), the input rows and the output's two buffers per row; at
// least minStreamPlanes rows divided among the terms' kernels (2 at least)
// under a budget of haloRowsBudget or more.
func (fp *FilterPlan) streamRows(budget int64) int {
	p := fp.terms[0].problem
	in, _ := nd.ShapeElements(p.InShape[1:])
	out, _ := nd.ShapeElements(p.OutShape[1:])
	perRow := int64(in * p.In.Size())
	kernels := 0
	for _, t := range fp.terms {
		perRow += 2 * int64(out*len(t.problem.Kernels)*t.problem.Out.Size())
		kernels += len(t.problem.Kernels)
	}
	perRow += 2 * int64(out*len(fp.filters)*fp.out.Size())
	n := max(p.OutShape[0], 1)
	rows := int(min(int64(n), max(budget/max(perRow, 1), 1)))
	if budget >= haloRowsBudget {
		rows = max(rows, min(max(minStreamPlanes/kernels, 2), n))
	}
	return rows
}

// termsStream is a filter plan of several terms chunk by chunk: each
// filter's terms from its stream, combined into the chunk's output.
type termsStream struct {
	fp       *FilterPlan
	streams  []chunkStream
	outs     [2]nd.Array // the output buffers, taking turns
	turn     int
	terms    [][]float64 // a piece of one filter's terms, per term
	combined []float64   // that piece combined
}

// combinePiece is the voxels a chunk's terms are combined in at a time, so
// that their float64 copies stay small.
const combinePiece = 1 << 14

func (ts *termsStream) len() int { return ts.streams[0].len() }

func (ts *termsStream) close() {}

func (ts *termsStream) next(ctx context.Context) (int, nd.Array, error) {
	nf := len(ts.fp.filters)
	var dst nd.Array
	offset := 0
	for i, st := range ts.streams {
		off, terms, err := st.next(ctx)
		if err != nil {
			return 0, nd.Array{}, fmt.Errorf("filter %s: %w", ts.fp.filters[i].Name, err)
		}
		f := ts.fp.filters[i]
		n := len(f.Terms)
		shape := terms.Shape
		if n > 1 {
			shape = shape[:len(shape)-1]
		}
		if i == 0 {
			if nf > 1 {
				shape = append(slices.Clone(shape), nf)
			}
			if dst, err = reuse(&ts.outs[ts.turn], ts.fp.out, shape); err != nil {
				return 0, nd.Array{}, err
			}
			ts.turn = 1 - ts.turn
			offset = off / n * nf
		}
		// As combineTerms, piece by piece into buffers reused: garbage
		// of a chunk's size per chunk grew the heap to twice what it held.
		for len(ts.terms) < n {
			ts.terms = append(ts.terms, make([]float64, combinePiece))
		}
		if ts.combined == nil {
			ts.combined = make([]float64, combinePiece)
		}
		voxels := terms.Len() / n
		for a := 0; a < voxels; a += combinePiece {
			m := min(combinePiece, voxels-a)
			pieces := make([][]float64, n)
			for t := range n {
				pieces[t] = ts.terms[t][:m]
				nd.LoadStrided(pieces[t], terms.Data, a*n+t, n)
			}
			nd.Store(dst.Data, a*nf+i, nf, f.Combine.Apply(ts.combined[:m], pieces...))
		}
	}
	return offset, dst, nil
}

// Chunked reports whether ExecuteChunks can run the filters: always, for
// a plan made by NewFilterPlan.
func (fp *FilterPlan) Chunked() bool { return fp != nil && (fp.bank != nil || len(fp.terms) > 0) }

// wholeRows raises budget, up to 16-fold, to hold two output rows along
// axis 0 with the input rows they read. Where the chunks' input is copied
// to a device (copied), a budget of haloRowsBudget or more is raised
// further to hold 8 output rows per halo row (K0 − 1): such chunks copy
// each input row at most 9/8 times (2048³ uint8 with a 7³ kernel in 64
// MiB: 5 planes a chunk read 2.2-fold; raised to 408 MiB, 48 read
// 1.125-fold). On the CPU chunks of whole rows read the input in place, so
// a halo row read twice costs no copy, and host memory stays within about
// two chunks' output and one's input (32×2048×2048 float32 with a 3³
// kernel in 64 MiB held 820 MiB raised for the halo, 162 MiB not, in about
// the same time). Smaller budgets (tests of chunk boundaries) keep small
// chunks.
func wholeRows(p *nd.Problem, budget int64, copied bool) int64 {
	in, out := int64(p.In.Size()), int64(p.Out.Size()*len(p.Kernels))
	for d := 1; d < len(p.InShape); d++ {
		in *= int64(p.InShape[d])
		out *= int64(p.OutShape[d])
	}
	halo := int64(p.KShape[0] - 1)
	outRows := int64(2)
	if copied && budget >= haloRowsBudget {
		outRows = max(outRows, 8*halo)
	}
	rows := (outRows+halo)*in + outRows*out
	return max(budget, min(rows, 16*budget))
}

// haloRowsBudget is the least budget wholeRows raises for the halo's share.
const haloRowsBudget = 1 << 20
