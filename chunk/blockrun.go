package chunk

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ndconv/ndconv/nd"
)

// Source reads regions of a problem's whole input: ReadRegion fills dst,
// an array of the input's dtype and of the given shape, with the box of
// that shape at start. RunBlocks calls it from several goroutines at once.
type Source interface {
	ReadRegion(start, shape []int, dst nd.Array) error
}

// BoxSource is a Source that also reads a region straight into a box of
// a larger array: ReadRegionAt fills the box at `at` of dst (of shape
// the region's shape) with the region at start. An edge block's boxes
// (its reflected or wrapped rows) are read from such a source into the
// block's input where they go, not into a buffer and copied.
type BoxSource interface {
	Source
	ReadRegionAt(start, shape []int, dst nd.Array, at []int) error
}

// Sink takes a block's output: WriteRegion puts src (of the output's
// dtype, the bank axis included) at start in the whole output. Each
// region is written once, whole; RunBlocks calls it from several
// goroutines at once, for regions that do not overlap. src is a worker's
// buffer, reused for its next block: a sink that keeps the data past the
// call copies it. Where a block must land atomically (a storage chunk
// written to a temporary and renamed, one PUT), the sink does so: a
// re-run block writes the same bytes.
type Sink interface {
	WriteRegion(start []int, src nd.Array) error
}

// ArraySource is a Source that reads an array in memory (or mapped).
type ArraySource struct{ Array nd.Array }

// ReadRegion copies the box of shape at start into dst.
func (s ArraySource) ReadRegion(start, shape []int, dst nd.Array) error {
	if err := checkBox(s.Array, start, shape); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	CopyBox(dst.Bytes(), shape, make([]int, len(shape)), s.Array.Bytes(), s.Array.Shape, start, shape, s.Array.DType().Size())
	return nil
}

// ReadRegionAt copies the box of shape at start into dst at at.
func (s ArraySource) ReadRegionAt(start, shape []int, dst nd.Array, at []int) error {
	if err := checkBox(s.Array, start, shape); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if err := checkBox(dst, at, shape); err != nil {
		return fmt.Errorf("read into: %w", err)
	}
	CopyBox(dst.Bytes(), dst.Shape, at, s.Array.Bytes(), s.Array.Shape, start, shape, s.Array.DType().Size())
	return nil
}

// ArraySink is a Sink that writes into an array in memory (or mapped).
type ArraySink struct{ Array nd.Array }

// WriteRegion copies src to start.
func (s ArraySink) WriteRegion(start []int, src nd.Array) error {
	if err := checkBox(s.Array, start, src.Shape); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	CopyBox(s.Array.Bytes(), s.Array.Shape, start, src.Bytes(), src.Shape, make([]int, len(start)), src.Shape, s.Array.DType().Size())
	return nil
}

// checkBox reports a box that does not lie inside a.
func checkBox(a nd.Array, start, shape []int) error {
	if len(start) != len(a.Shape) || len(shape) != len(a.Shape) {
		return &nd.ArgumentError{Arg: "region", Msg: fmt.Sprintf("start %v, shape %v for an array of shape %v", start, shape, a.Shape)}
	}
	for d := range start {
		if start[d] < 0 || shape[d] < 0 || start[d]+shape[d] > a.Shape[d] {
			return &nd.ArgumentError{Arg: "region", Msg: fmt.Sprintf("start %v, shape %v outside the array's shape %v", start, shape, a.Shape)}
		}
	}
	return nil
}

// BlockExec computes a block: dst (of the block's full output shape) from
// src (of its sub-problem's input shape). worker (0 ≤ worker < inFlight)
// names the goroutine calling it, so that an engine prepared for one block
// serves the worker's next block of the same geometry (SameGeometry).
type BlockExec func(ctx context.Context, worker int, b *Block, dst, src nd.Array) error

// RunBlocks computes every block of g: inFlight workers (at least 1) each
// take the next block, read its input from src (one ReadRegion per box of
// Regions), compute it with exec and write its output to sink, so that
// host memory holds inFlight blocks' input and output, whatever the
// volume. Each worker reuses its buffers from block to block. The first
// error stops the workers (blocks already written stay written) and is
// returned with the block's index and box; ctx is checked before each
// block, and progress (which may be nil) counts blocks written out of the
// total.
func RunBlocks(ctx context.Context, g *Grid, src Source, sink Sink, inFlight int, progress nd.Progress, exec BlockExec) error {
	return RunBlocksSkip(ctx, g, src, sink, inFlight, progress, nil, exec)
}

// RunBlocksSkip is RunBlocks that leaves out the blocks for which skip
// (when not nil; called from the workers) reports true: they are not read,
// computed or written, and progress counts them as done. A run resumed
// after an interruption skips the blocks whose output is stored whole:
// since a block is a pure function of the problem and its index, the
// blocks it does run write what the first run would have.
func RunBlocksSkip(ctx context.Context, g *Grid, src Source, sink Sink, inFlight int, progress nd.Progress, skip func(i int) bool, exec BlockExec) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		first      error
		wg         sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	total := int64(g.Len())
	for w := range min(max(inFlight, 1), max(g.Len(), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var bufs blockBuffers
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if skip != nil && skip(int(i)) {
					if n := done.Add(1); progress != nil {
						progress.Report(n, total)
					}
					continue
				}
				b := g.Block(int(i))
				if err := bufs.run(ctx, w, &b, src, sink, exec); err != nil {
					if g.Len() > 1 {
						err = fmt.Errorf("block %d of %d (output %v–%v): %w", i, total, b.OutLo, b.OutHi, err)
					}
					fail(err)
					return
				}
				if n := done.Add(1); progress != nil {
					progress.Report(n, total)
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// blockBuffers are one worker's input, output and region buffers, reused
// from block to block.
type blockBuffers struct {
	in, out, region nd.Array
}

func (bb *blockBuffers) run(ctx context.Context, worker int, b *Block, src Source, sink Sink, exec BlockExec) (err error) {
	defer nd.RecoverPanic(&err)
	p := b.Problem
	in, err := reuseArray(&bb.in, p.In, p.InShape)
	if err != nil {
		return err
	}
	if err := b.Read(src, in, &bb.region); err != nil {
		return err
	}
	out, err := reuseArray(&bb.out, p.Out, p.FullShape())
	if err != nil {
		return err
	}
	if err := exec(ctx, worker, b, out, in); err != nil {
		return err
	}
	return sink.WriteRegion(b.OutStart(), out)
}

// Read fills in (of the block's input shape) from src: the one box of an
// interior block straight into it, the boxes of an edge block straight
// into it where src is a BoxSource, else through region (a buffer reused
// from call to call; may be nil).
func (b *Block) Read(src Source, in nd.Array, region *nd.Array) error {
	var boxes int
	b.Regions(func(_, _, _ []int) { boxes++ })
	if boxes == 1 {
		var err error
		b.Regions(func(start, shape, _ []int) { err = src.ReadRegion(start, shape, in) })
		return err
	}
	var scratch nd.Array
	if region == nil {
		region = &scratch
	}
	// The largest box first: a source that keeps what it decodes (a Zarr
	// input's chunk cache) then serves the thin boxes beside it (an edge's
	// reflected rows) from chunks it has decoded whole, where read first
	// they would decode a chunk for a few rows and the large box decode it
	// again (1,229 decodes of 1,024 chunks, 1024³ in 16 blocks).
	type box struct{ start, shape, at []int }
	var list []box
	b.Regions(func(start, shape, at []int) {
		list = append(list, box{slices.Clone(start), slices.Clone(shape), slices.Clone(at)})
	})
	volume := func(shape []int) int {
		n := 1
		for _, e := range shape {
			n *= e
		}
		return n
	}
	slices.SortStableFunc(list, func(x, y box) int { return cmp.Compare(volume(y.shape), volume(x.shape)) })
	if bs, ok := src.(BoxSource); ok {
		for _, bx := range list {
			if err := bs.ReadRegionAt(bx.start, bx.shape, in, bx.at); err != nil {
				return err
			}
		}
		return nil
	}
	size := in.DType().Size()
	for _, bx := range list {
		r, err := reuseArray(region, in.DType(), bx.shape)
		if err != nil {
			return err
		}
		if err := src.ReadRegion(bx.start, bx.shape, r); err != nil {
			return err
		}
		CopyBox(in.Bytes(), in.Shape, bx.at, r.Bytes(), bx.shape, make([]int, len(bx.shape)), bx.shape, size)
	}
	return nil
}

// reuseArray returns an array of dt and shape backed by *buf, allocating a
// larger buffer (kept in *buf) where it is too small.
func reuseArray(buf *nd.Array, dt nd.DType, shape []int) (nd.Array, error) {
	n, err := nd.NumElements(shape)
	if err != nil {
		return nd.Array{}, err
	}
	if buf.Data == nil || buf.DType() != dt || buf.Len() < n {
		if *buf, err = nd.New(dt, n); err != nil {
			return nd.Array{}, err
		}
	}
	return nd.Array{Shape: slices.Clone(shape), Data: nd.SliceData(buf.Data, 0, n)}, nil
}
