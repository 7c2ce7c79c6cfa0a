package gpu

import (
	"context"
	"errors"
	"runtime"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
)

// pipelineDepth is how many chunks are in flight at once, each in a slot
// of its own: one copied in, one computing, one copied out.
const pipelineDepth = 3

// slotEvents are a slot's events: chunk.Stage k's start and end at 2k, 2k+1.
const slotEvents = 6

// pipeline is what Execute keeps between executions: queues for copies
// in and out beside the kernel queue, the slots, the temporaries every
// chunk shares, and each chunk geometry's launches in each slot.
type pipeline struct {
	copyIn, copyOut Queue
	slots           [pipelineDepth]slot
	temps           [2]Buffer
	geometries      []geometry
	origin          Event         // recorded before the first copy when timing
	inputs          []*chunkInput // each chunk's copies from registered memory, once sorted
}

// slot holds one chunk in flight.
type slot struct {
	in, out           Buffer
	stageIn, stageOut HostBuffer
	events            [slotEvents]Event
}

// geometry is a chunk sub-problem's launches, prepared in each slot;
// chunks of one geometry (all but those at the edges) share them.
type geometry struct {
	p     *nd.Problem
	slots [pipelineDepth]*prepared
}

// newPipeline makes the queues, events, slots and temporaries.
func (e *Engine) newPipeline(chunks []chunk.Chunk) (pl *pipeline, err error) {
	pl = &pipeline{inputs: make([]*chunkInput, len(chunks))}
	defer func() {
		if err != nil {
			pl.close()
		}
	}()
	if pl.copyIn, err = e.dev.NewQueue(); err != nil {
		return nil, err
	}
	if pl.copyOut, err = e.dev.NewQueue(); err != nil {
		return nil, err
	}
	if pl.origin, err = e.dev.NewEvent(); err != nil {
		return nil, err
	}
	inBytes, outBytes, temps, tempBytes := 1, 1, 0, 1
	for _, c := range chunks {
		inBytes = max(inBytes, c.InElems*e.p.In.Size())
		outBytes = max(outBytes, c.OutElems*e.p.Out.Size())
		n, b := e.method.temps(e, c.Problem)
		temps, tempBytes = max(temps, n), max(tempBytes, b)
	}
	for i := range temps {
		if pl.temps[i], err = e.dev.Scratch(tempBytes); err != nil {
			return nil, err
		}
	}
	for i := range min(len(pl.slots), len(chunks)) { // a slot per chunk in flight
		s := &pl.slots[i]
		if s.in, err = e.dev.Scratch(inBytes); err != nil {
			return nil, err
		}
		if s.out, err = e.dev.Scratch(outBytes); err != nil {
			return nil, err
		}
		if s.stageIn, err = e.dev.AllocHost(inBytes); err != nil {
			return nil, err
		}
		if s.stageOut, err = e.dev.AllocHost(outBytes); err != nil {
			return nil, err
		}
		for j := range s.events {
			if s.events[j], err = e.dev.NewEvent(); err != nil {
				return nil, err
			}
		}
	}
	return pl, nil
}

// launches returns p's launches in a slot, prepared on first use.
func (e *Engine) launches(pl *pipeline, p *nd.Problem, slot int) (*prepared, error) {
	i := slices.IndexFunc(pl.geometries, func(g geometry) bool { return chunk.SameGeometry(g.p, p) })
	if i < 0 {
		pl.geometries = append(pl.geometries, geometry{p: p})
		i = len(pl.geometries) - 1
	}
	g := &pl.geometries[i]
	if g.slots[slot] == nil {
		s := &pl.slots[slot]
		pr, err := e.method.prepare(e, p, s.in, s.out, pl.temps)
		if err != nil {
			e.queue.Finish() // the parameters' uploads, before their buffers go back
			pr.free()
			return nil, err
		}
		g.slots[slot] = pr
	}
	return g.slots[slot], nil
}

// close waits for the queues and frees everything; nil does nothing.
func (pl *pipeline) close() error {
	if pl == nil {
		return nil
	}
	errs := closeAll(nil, Queue.Finish, pl.copyIn, pl.copyOut)
	for _, g := range pl.geometries {
		for _, pr := range g.slots {
			if pr != nil {
				pr.free()
			}
		}
	}
	for i := range pl.slots {
		s := &pl.slots[i]
		errs = closeAll(errs, Event.Close, s.events[:]...)
		errs = closeAll(errs, Buffer.Free, s.in, s.out)
		errs = closeAll(errs, HostBuffer.Free, s.stageIn, s.stageOut)
	}
	errs = closeAll(errs, Buffer.Free, pl.temps[:]...)
	errs = closeAll(errs, Event.Close, pl.origin)
	return errors.Join(closeAll(errs, Queue.Close, pl.copyIn, pl.copyOut)...)
}

// executePipelined runs the engine's chunks through the pipeline: the host
// gathers a chunk's input into its slot's staging, the copy-in queue
// copies it to the device, the kernel queue waits for that and runs the
// launches, the copy-out queue waits for those and copies the output to
// staging, which the host empties into dst. So chunk i+1 is copied in and
// chunk i−1 out while chunk i computes; chunks compute in order on one
// queue, so one set of temporaries serves them all. Registered arrays
// (hostreg.go) skip staging (see chunkInput).
func (e *Engine) executePipelined(ctx context.Context, dst, src nd.Array) error {
	pl, chunks := e.pipe, e.pieces
	inSize, outSize := e.p.In.Size(), e.p.Out.Size()
	srcBytes, dstBytes := src.Bytes(), dst.Bytes()
	regs := e.registered(hostArray{src.Data, srcBytes}, hostArray{dst.Data, dstBytes})
	srcReg, dstReg := regs[0], regs[1]
	// Copies from and to the arrays are in flight until Run returns.
	defer func() {
		if r, ok := e.dev.(Registrar); ok {
			r.HostRegs().release(regs...)
		}
		runtime.KeepAlive(src.Data)
		runtime.KeepAlive(dst.Data)
	}()
	timing := e.opt.Timeline != nil
	var spans []chunk.Span
	if timing {
		if err := pl.copyIn.Record(pl.origin); err != nil {
			return err
		}
	}
	queues := []Queue{pl.copyIn, e.queue, pl.copyOut}
	err := chunk.Pipeline{
		Depth: pipelineDepth,
		Queue: func(slot, i int) error {
			s, c := &pl.slots[slot], &chunks[i]
			pr, err := e.launches(pl, c.Problem, slot)
			if err != nil {
				return err
			}
			inN, outN := c.InElems*inSize, c.OutElems*outSize
			copyIn := func() error { return pl.copyIn.Write(s.in, 0, s.stageIn.Bytes()[:inN]) }
			if srcReg != nil && pl.input(i, c, inSize, e.directCopyMin).direct {
				copyIn = func() error { return pl.inputs[i].copy(s, srcBytes, pl.copyIn) }
			} else {
				c.Gather(s.stageIn.Bytes(), srcBytes, inSize)
			}
			outHost := s.stageOut.Bytes()[:outN]
			if dstReg != nil {
				outHost = dstBytes[c.OutOffset*outSize:][:outN]
			}
			copyOut := func() error { return pl.copyOut.Read(outHost, s.out, 0) }
			// Each stage after the previous one's end; start events are
			// for the timeline.
			for k, work := range []func() error{copyIn, pr.run, copyOut} {
				q := queues[k]
				if k > 0 {
					if err := q.Wait(s.events[2*k-1]); err != nil {
						return err
					}
				}
				var start error
				if timing {
					start = q.Record(s.events[2*k])
				}
				if err := errors.Join(start, work(), q.Record(s.events[2*k+1])); err != nil {
					return err
				}
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
			if err := s.events[slotEvents-1].Synchronize(); err != nil {
				return err
			}
			if dstReg == nil {
				n := c.OutElems * outSize
				chunk.Copy(dstBytes[c.OutOffset*outSize:][:n], s.stageOut.Bytes()[:n])
			}
			if timing {
				spans = append(spans, pl.spans(s, i)...)
			}
			return nil
		},
		Abort: func() {
			for _, q := range queues {
				q.Finish()
			}
		},
	}.Run(ctx, len(chunks), e.opt.Progress)
	if err == nil && timing {
		e.opt.Timeline.Add(spans...)
	}
	return err
}

// registered acquires the registrations covering arrays (the caller
// releases them), nil for each array that goes through staging.
func (e *Engine) registered(arrays ...hostArray) []*hostReg {
	for i := range arrays {
		if e.opt.Staging || len(arrays[i].b) < e.registerMin {
			arrays[i].b = nil
		}
	}
	r, ok := e.dev.(Registrar)
	if !ok {
		return make([]*hostReg, len(arrays))
	}
	return r.HostRegs().acquire(e, arrays...)
}

// A chunk's input from registered memory is its runs (chunk.Runs) copied
// straight from the caller's array, but for runs shorter than
// minDirectCopy: a copy costs microseconds of driver time, more than the
// host takes to copy a short run, so short runs (a border's rows) are
// gathered into staging and copied from there, consecutive ones as one. A
// chunk with more than maxGathered bytes of short runs or maxChunkCopies
// copies goes through staging whole.
const (
	minDirectCopy  = 32 << 10
	maxGathered    = 1 << 20
	maxChunkCopies = 64
)

// byteRun is n bytes from offset from to offset to.
type byteRun struct{ from, to, n int }

// chunkInput is how one chunk's input is copied from registered memory.
type chunkInput struct {
	direct  bool      // false: through staging whole
	copies  []byteRun // from the caller's array to the device
	gathers []byteRun // from the caller's array into staging
	staged  []byteRun // from staging to the device (from = to)
}

// newChunkInput sorts c's runs (of size-byte elements) into copies of
// minDirect bytes or more and gathers.
func newChunkInput(c *chunk.Chunk, size, minDirect int) chunkInput {
	var in chunkInput
	gathered := 0
	c.Runs(func(from, to, n int) {
		r := byteRun{from * size, to * size, n * size}
		if r.n >= minDirect {
			in.copies = append(in.copies, r)
			return
		}
		in.gathers = append(in.gathers, r)
		gathered += r.n
		if k := len(in.staged) - 1; k >= 0 && in.staged[k].to+in.staged[k].n == r.to {
			in.staged[k].n += r.n
		} else {
			in.staged = append(in.staged, byteRun{r.to, r.to, r.n})
		}
	})
	in.direct = gathered <= maxGathered && len(in.copies)+len(in.staged) <= maxChunkCopies
	return in
}

// copy gathers the short runs into s's staging and queues the copies.
func (in *chunkInput) copy(s *slot, src []byte, q Queue) error {
	stage := s.stageIn.Bytes()
	for _, r := range in.gathers {
		copy(stage[r.to:r.to+r.n], src[r.from:r.from+r.n])
	}
	for _, r := range in.copies {
		if err := q.Write(s.in, r.to, src[r.from:r.from+r.n]); err != nil {
			return err
		}
	}
	for _, r := range in.staged {
		if err := q.Write(s.in, r.to, stage[r.from:r.from+r.n]); err != nil {
			return err
		}
	}
	return nil
}

// input returns chunk i's chunkInput, made on first use.
func (pl *pipeline) input(i int, c *chunk.Chunk, size, minDirect int) *chunkInput {
	if pl.inputs[i] == nil {
		in := newChunkInput(c, size, minDirect)
		pl.inputs[i] = &in
	}
	return pl.inputs[i]
}

// spans reads a drained slot's events, chunk i's, against the origin.
func (pl *pipeline) spans(s *slot, i int) []chunk.Span {
	var out []chunk.Span
	for stage := range slotEvents / 2 {
		start, err1 := s.events[2*stage].Since(pl.origin)
		end, err2 := s.events[2*stage+1].Since(pl.origin)
		if err1 == nil && err2 == nil {
			out = append(out, chunk.Span{Chunk: i, Stage: chunk.Stage(stage), Start: start, End: end})
		}
	}
	return out
}
