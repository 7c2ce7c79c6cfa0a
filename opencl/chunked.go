package opencl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// pipelineDepth is how many chunks are in flight at once: one being
// copied in, one computing, one being copied out, each in a slot of its
// own (device buffers and pinned staging).
const pipelineDepth = 3

// chunks splits the engine's problem into the pieces Execute runs
// (chunk.Pieces): each of the pipeline's slots (a chunk's input, output
// and temporaries) within a third of the memory budget — the options'
// MemoryBudget, else the smaller of three of the device's largest buffers
// and 70% of its memory, so that no buffer passes what one allocation
// allows — and large problems in pieces whose transfers overlap.
func (e *Engine) chunks() ([]chunk.Chunk, error) {
	return chunksOf(e.p, e.dev.Info(), e.opt, e.family)
}

// chunksOf is chunks for an engine of family on the device info describes.
func chunksOf(p *nd.Problem, info Info, opt EngineOptions, family string) ([]chunk.Chunk, error) {
	budget := memoryBudget(info, opt.MemoryBudget, pipelineDepth)
	var scratch func(*nd.Problem) int64
	if family == "separable" {
		sopt := separableOptions(info, opt.Tuning)
		acc := int64(kernels.AccBytes(p))
		scratch = func(q *nd.Problem) int64 {
			s, err := kernels.NewSeparable(q, sopt)
			if err != nil || s == nil {
				return 0
			}
			return int64(s.Temps) * int64(s.TempElems) * acc
		}
	}
	return chunk.Pieces(p, budget, pipelineDepth, opt.PieceBytes, scratch)
}

// pipeline is what a pipelined execution keeps between executions: a
// queue for copies in, one for kernels and one for copies out, the slots
// of device buffers and pinned staging, the temporaries, and the prepared
// launches of each chunk geometry.
type pipeline struct {
	copyIn, compute, copyOut *Queue
	slots                    [pipelineDepth]slot
	temps                    [2]*Buffer
	geometries               []geometry
}

// slot holds one chunk in flight: its buffers on the device, its pinned
// staging, and the events of its copy in, kernels and copy out.
type slot struct {
	in, out           *Buffer
	stageIn, stageOut *HostBuffer
	write, read       *Event
	kernels           []*Event
}

// geometry is a chunk sub-problem's prepared launches; chunks of one
// geometry (all but those at the edges) share them.
type geometry struct {
	p     *nd.Problem
	steps []preparedStep
}

// newPipeline creates the queues and sizes the slots for the chunks.
func (e *Engine) newPipeline(chunks []chunk.Chunk) (pl *pipeline, err error) {
	pl = &pipeline{}
	defer func() {
		if err != nil {
			pl.close()
		}
	}()
	for _, q := range []**Queue{&pl.copyIn, &pl.compute, &pl.copyOut} {
		if *q, err = e.dev.NewQueue(); err != nil {
			return nil, err
		}
	}
	inBytes, outBytes := 1, 1
	for _, c := range chunks {
		inBytes = max(inBytes, c.InElems*e.p.In.Size())
		outBytes = max(outBytes, c.OutElems*e.p.Out.Size())
	}
	for i := range min(len(pl.slots), len(chunks)) { // a slot per chunk in flight
		s := &pl.slots[i]
		if s.in, err = e.dev.Alloc(inBytes); err != nil {
			return nil, err
		}
		if s.out, err = e.dev.Alloc(outBytes); err != nil {
			return nil, err
		}
		if s.stageIn, err = e.dev.AllocHost(pl.copyIn, inBytes); err != nil {
			return nil, err
		}
		if s.stageOut, err = e.dev.AllocHost(pl.copyOut, outBytes); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// geometry returns the prepared launches for a chunk's sub-problem,
// preparing them (and growing the temporaries) on first use.
func (e *Engine) geometry(pl *pipeline, p *nd.Problem) ([]preparedStep, error) {
	if i := slices.IndexFunc(pl.geometries, func(g geometry) bool { return chunk.SameGeometry(g.p, p) }); i >= 0 {
		return pl.geometries[i].steps, nil
	}
	newSub := NewDirect
	if e.family == "separable" {
		newSub = NewSeparable
	}
	// A sub-engine only plans the launches; its device reference is
	// dropped at once (the engine holds the device).
	s, err := newSub(p, e.opt)
	if err != nil {
		return nil, err
	}
	steps, tempBytes, err := s.prepareSteps()
	s.dev.Close()
	if err != nil {
		return nil, err
	}
	if err := allocTemps(e.dev, &pl.temps, steps, tempBytes); err != nil {
		releaseSteps(steps)
		return nil, err
	}
	pl.geometries = append(pl.geometries, geometry{p: p, steps: steps})
	return steps, nil
}

// close waits for the queues and frees everything; nil does nothing.
func (pl *pipeline) close() error {
	if pl == nil {
		return nil
	}
	var errs []error
	for _, q := range []*Queue{pl.copyIn, pl.compute, pl.copyOut} {
		if q != nil {
			errs = append(errs, q.Finish())
		}
	}
	for i := range pl.slots {
		s := &pl.slots[i]
		s.release()
		errs = append(errs, s.stageIn.Free(), s.stageOut.Free(), s.in.Free(), s.out.Free())
	}
	for _, g := range pl.geometries {
		errs = append(errs, releaseSteps(g.steps))
	}
	for _, t := range pl.temps {
		errs = append(errs, t.Free())
	}
	for _, q := range []*Queue{pl.copyIn, pl.compute, pl.copyOut} {
		errs = append(errs, q.Close())
	}
	return errors.Join(errs...)
}

// release drops the slot's events.
func (s *slot) release() {
	s.write.Release()
	s.read.Release()
	releaseEvents(s.kernels)
	s.write, s.read, s.kernels = nil, nil, nil
}

// executePipelined runs the engine's pieces through the pipeline: for
// each chunk the host gathers its input rows into a slot's pinned staging
// (spread over the cores), a non-blocking write on the copy-in queue moves
// them to the device, the kernels on the compute queue wait for that
// write, and a non-blocking read on the copy-out queue waits for the
// kernels; the host empties a slot's output into dst before the slot
// takes the chunk three places on. So chunk i+1 is copied in and chunk
// i−1 copied out while chunk i computes. Chunks are computed in order on
// one in-order queue, so one set of temporaries serves them all.
func (e *Engine) executePipelined(ctx context.Context, dst, src nd.Array) (err error) {
	if e.pipe == nil {
		if e.pipe, err = e.newPipeline(e.pieces); err != nil {
			return err
		}
	}
	pl, chunks := e.pipe, e.pieces
	inSize, outSize := e.p.In.Size(), e.p.Out.Size()
	srcBytes, dstBytes := src.Bytes(), dst.Bytes()
	var spans []chunk.Span
	var origin uint64 // the first copy in's start, on the device clock
	queues := []*Queue{pl.copyIn, pl.compute, pl.copyOut}
	err = chunk.Pipeline{
		Depth: pipelineDepth,
		Queue: func(slot, i int) (err error) {
			s, c := &pl.slots[slot], &chunks[i]
			steps, err := e.geometry(pl, c.Problem)
			if err != nil {
				return err
			}
			c.Gather(s.stageIn.Bytes(), srcBytes, inSize)
			if s.write, err = s.in.WriteAsync(pl.copyIn, 0, s.stageIn, max(c.InElems*inSize, 1), nil); err != nil {
				return err
			}
			if s.kernels, err = enqueueSteps(ctx, pl.compute, steps, s.in, s.out, pl.temps, []*Event{s.write}); err != nil {
				return err
			}
			if len(s.kernels) == 0 {
				return fmt.Errorf("opencl: a chunk of %v has no launches", c.Problem.OutShape)
			}
			if s.read, err = s.out.ReadAsync(pl.copyOut, s.stageOut, 0, max(c.OutElems*outSize, 1), s.kernels[len(s.kernels)-1:]); err != nil {
				return err
			}
			for _, q := range queues {
				if err := q.Flush(); err != nil {
					return err
				}
			}
			return nil
		},
		Drain: func(slot, i int) error {
			s, c := &pl.slots[slot], &chunks[i]
			defer s.release()
			if err := s.read.Wait(); err != nil {
				return err
			}
			chunk.Copy(dstBytes[c.OutOffset*outSize:][:c.OutElems*outSize], s.stageOut.Bytes())
			if e.opt.Timeline != nil {
				spans = append(spans, e.spans(s, i, &origin)...)
			}
			return nil
		},
		Abort: func() {
			for _, q := range queues {
				q.Finish()
			}
			for i := range pl.slots {
				pl.slots[i].release()
			}
		},
	}.Run(ctx, len(chunks), e.opt.Progress)
	if err == nil && e.opt.Timeline != nil {
		e.opt.Timeline.Add(spans...)
	}
	return err
}

// spans reads the profiling counters of a drained slot's events, chunk
// i's: its copy in, its kernels as one span, its copy out, from *origin
// (set by the first).
func (e *Engine) spans(s *slot, i int, origin *uint64) []chunk.Span {
	var out []chunk.Span
	add := func(stage chunk.Stage, first, last *Event) {
		start, _, err1 := first.Times()
		_, end, err2 := last.Times()
		if err1 != nil || err2 != nil {
			return
		}
		if *origin == 0 {
			*origin = start
		}
		out = append(out, chunk.Span{Chunk: i, Stage: stage,
			Start: time.Duration(int64(start - *origin)), End: time.Duration(int64(end - *origin))})
	}
	add(chunk.CopyIn, s.write, s.write)
	add(chunk.Kernel, s.kernels[0], s.kernels[len(s.kernels)-1])
	add(chunk.CopyOut, s.read, s.read)
	return out
}

// chunkEngine is what runChunks needs of an engine.
type chunkEngine interface {
	Execute(ctx context.Context, dst, src nd.Array) error
	Close() error
}

// runChunks runs a split problem chunk by chunk, each chunk's sub-problem
// on an engine newEngine makes; chunks of one geometry (all but those at
// the edges) share an engine and its built kernels. It reports chunks done
// out of the total as progress.
func runChunks[E chunkEngine](ctx context.Context, chunks []chunk.Chunk, dst, src nd.Array, progress nd.Progress, newEngine func(*nd.Problem) (E, error)) error {
	type sub struct {
		p *nd.Problem
		e E
	}
	var engines []sub
	defer func() {
		for _, s := range engines {
			s.e.Close()
		}
	}()
	return chunk.Run(ctx, chunks, src, progress, func(ctx context.Context, c *chunk.Chunk, src nd.Array) error {
		i := slices.IndexFunc(engines, func(s sub) bool { return chunk.SameGeometry(s.p, c.Problem) })
		if i < 0 {
			e, err := newEngine(c.Problem)
			if err != nil {
				return err
			}
			engines = append(engines, sub{c.Problem, e})
			i = len(engines) - 1
		}
		return engines[i].e.Execute(ctx, c.Output(dst), src)
	})
}
