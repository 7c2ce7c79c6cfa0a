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
// memory-mapped file and sink may write a file. Progress, when the plan
// has one, counts chunks; ctx is checked between chunks. An empty output
// is one chunk with no element. Each call prepares its own executables, so
// calls on one plan run concurrently; the plan's Close does not wait for
// them, and after it ExecuteChunks is ErrClosed. sink must not be nil.
func (p *Plan) ExecuteChunks(ctx context.Context, src Array, budget int64, sink func(offset int, out Array) error) error {
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
	if err := src.Check(); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if src.DType() != p.inType || !slices.Equal(src.Shape, p.problem.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", src.DType(), src.Shape, p.inType, p.problem.InShape)}
	}
	// Every chunk runs the whole plan's method on its device: a method
	// chosen anew for a chunk's shape could add the products differently.
	opt := p.opt
	opt.Device, opt.Method, opt.Progress = p.exec.Device, p.exec.Method, nil
	if s := newSeparableStream(p.problem, p.exec); s != nil {
		if cs := s.chunks(budget); cs != nil {
			w := startChunkWriter(sink)
			err := s.run(ctx, cs, src, opt, p.opt.Progress, w)
			if werr := w.close(); werr != nil {
				return werr
			}
			return err
		}
	}
	chunks, err := chunk.Split(p.problem, chunk.Budget{Bytes: wholeRows(p.problem, budget, p.exec.Device.GPU())})
	if err != nil {
		return err
	}
	var exec *plan.Executable
	defer func() {
		if exec != nil {
			exec.Close()
		}
	}()
	w := startChunkWriter(sink)
	var outs [2]nd.Array // the output buffers, taking turns
	turn := 0
	err = chunk.Run(ctx, chunks, src, p.opt.Progress, func(ctx context.Context, c *chunk.Chunk, src nd.Array) error {
		if exec == nil || !chunk.SameGeometry(exec.Problem, c.Problem) {
			if exec != nil {
				exec.Close()
			}
			var err error
			if exec, err = plan.New(c.Problem, opt); err != nil {
				return err
			}
		}
		// The sink is done with this turn's buffer: it has taken the
		// chunk after the one it held.
		out, err := reuse(&outs[turn], p.problem.Out, c.Problem.FullShape())
		if err != nil {
			return err
		}
		turn = 1 - turn
		if err := exec.Execute(ctx, out, src); err != nil {
			return err
		}
		return w.hand(c.OutOffset, out)
	})
	if werr := w.close(); werr != nil {
		return werr // the cause, where the sink stopped the chunks
	}
	return err
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

// ExecuteChunks is Plan.ExecuteChunks for filters that run as one kernel
// bank (Chunked); filters of several terms are refused.
func (fp *FilterPlan) ExecuteChunks(ctx context.Context, src Array, budget int64, sink func(offset int, out Array) error) error {
	if fp == nil || fp.bank == nil && len(fp.terms) == 0 {
		return errNoFilterPlan
	}
	if fp.bank == nil {
		return &nd.ArgumentError{Arg: "filters", Msg: "filters of several terms do not run chunk by chunk"}
	}
	return fp.bank.ExecuteChunks(ctx, src, budget, sink)
}

// Chunked reports whether ExecuteChunks can run the filters: whether they
// run as one kernel bank.
func (fp *FilterPlan) Chunked() bool { return fp != nil && fp.bank != nil }

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
