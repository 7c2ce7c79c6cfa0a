package gpu

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
)

// pipelineDepth is how many chunks are in flight at once: one being
// copied in, one computing, one being copied out, each in a slot of its
// own (device buffers and pinned staging).
const pipelineDepth = 3

// The events of a slot's chunk, in the order they are recorded.
const (
	copyInStart = iota
	copyInEnd
	kernelStart
	kernelEnd
	copyOutStart
	copyOutEnd
	slotEvents
)

// pipeline is what Execute keeps between executions: a queue for copies
// in and one for copies out beside the engine's kernel queue, the slots,
// the temporaries every chunk's launches share (the kernel queue runs
// them one chunk after another), and the prepared launches of each chunk
// geometry in each slot.
type pipeline struct {
	copyIn, copyOut Queue
	slots           [pipelineDepth]slot
	temps           [2]Buffer
	geometries      []geometry
	origin          Event         // recorded before the first copy when timing
	inputs          []*chunkInput // each chunk's copies from registered memory, once sorted
}

// slot holds one chunk in flight: its input and output on the device,
// its pinned staging (for arrays that are not registered, and the short
// runs of those that are), and the events of its copies and kernels.
type slot struct {
	in, out           Buffer
	stageIn, stageOut HostBuffer
	events            [slotEvents]Event
}

// geometry is a chunk sub-problem's launches, prepared in each slot (their
// arguments name the slot's buffers); chunks of one geometry (all but
// those at the edges) share them.
type geometry struct {
	p     *nd.Problem
	slots [pipelineDepth]*prepared
}

// newPipeline creates the queues, events, slots and temporaries for the
// chunks.
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

// launches returns the launches of a chunk's sub-problem in a slot,
// preparing them on first use.
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
	var errs []error
	for _, q := range []Queue{pl.copyIn, pl.copyOut} {
		if q != nil {
			errs = append(errs, q.Finish())
		}
	}
	for _, g := range pl.geometries {
		for _, pr := range g.slots {
			if pr != nil {
				pr.free()
			}
		}
	}
	for i := range pl.slots {
		s := &pl.slots[i]
		for _, ev := range s.events {
			if ev != nil {
				errs = append(errs, ev.Close())
			}
		}
		for _, b := range []Buffer{s.in, s.out} {
			if b != nil {
				errs = append(errs, b.Free())
			}
		}
		for _, h := range []HostBuffer{s.stageIn, s.stageOut} {
			if h != nil {
				errs = append(errs, h.Free())
			}
		}
	}
	for _, t := range pl.temps {
		if t != nil {
			errs = append(errs, t.Free())
		}
	}
	if pl.origin != nil {
		errs = append(errs, pl.origin.Close())
	}
	for _, q := range []Queue{pl.copyIn, pl.copyOut} {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	return errors.Join(errs...)
}

// executePipelined runs the engine's chunks through the pipeline. For each
// chunk the host gathers its input rows into a slot's pinned staging
// (spread over the cores); the copy-in queue copies them to the device
// and records an event; the kernel queue waits for that event and runs
// the chunk's launches; the copy-out queue waits for the kernels' event
// and copies the output into pinned staging; the host empties a slot's
// staging into dst before the slot takes the chunk three places on. So
// chunk i+1 is copied in and chunk i−1 copied out while chunk i computes,
// and the host's copies run meanwhile. Chunks compute in order on one
// queue, so one set of temporaries serves them all.
//
// Where src or dst is registered (hostreg.go), its copies skip the host:
// a chunk's input runs are copied straight from src (see chunkInput) and
// its output straight into dst, so the copy engines run at the pinned
// rate with nothing on the host in their way. The bits are the same
// either way: the same bytes land in the same places.
func (e *Engine) executePipelined(ctx context.Context, dst, src nd.Array) error {
	pl, chunks := e.pipe, e.pieces
	inSize, outSize := e.p.In.Size(), e.p.Out.Size()
	srcBytes, dstBytes := src.Bytes(), dst.Bytes()
	regs := e.registered(hostArray{src.Data, srcBytes}, hostArray{dst.Data, dstBytes})
	srcReg, dstReg := regs[0], regs[1]
	// Copies from and to the arrays are in flight until Run returns: after
	// the last drain, or after Abort has finished the queues.
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
			// The start events only matter to the timeline.
			record := func(ev int, q Queue) error {
				if !timing && (ev == copyInStart || ev == kernelStart || ev == copyOutStart) {
					return nil
				}
				return q.Record(s.events[ev])
			}
			err = errors.Join(record(copyInStart, pl.copyIn), copyIn(), record(copyInEnd, pl.copyIn))
			if err == nil {
				err = e.queue.Wait(s.events[copyInEnd])
			}
			if err == nil {
				err = errors.Join(record(kernelStart, e.queue), pr.run(), record(kernelEnd, e.queue))
			}
			if err == nil {
				err = pl.copyOut.Wait(s.events[kernelEnd])
			}
			if err == nil {
				err = errors.Join(
					record(copyOutStart, pl.copyOut),
					pl.copyOut.Read(outHost, s.out, 0),
					record(copyOutEnd, pl.copyOut))
			}
			for _, q := range queues {
				if err == nil {
					err = q.Flush()
				}
			}
			return err
		},
		Drain: func(slot, i int) error {
			s, c := &pl.slots[slot], &chunks[i]
			if err := s.events[copyOutEnd].Synchronize(); err != nil {
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

// registered returns the registrations covering arrays for this
// execution (acquired: the caller releases them), nil for each array that
// goes through staging: all of them under Options.Staging, and
// those below the engine's registerMin.
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

// A chunk's input copied from registered memory is its runs (chunk.Runs)
// copied straight from the caller's array, but for runs shorter than
// minDirectCopy: each copy costs microseconds of driver time and a DMA
// setup, more than the host takes to copy a short run, so short runs —
// the single rows a border maps at a chunk's edge — are gathered into the
// slot's staging at their place and copied from there, consecutive ones
// as one copy. A chunk with more than maxGathered bytes of short runs or
// more than maxChunkCopies copies goes through staging whole, gathered on
// all the cores.
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

// newChunkInput sorts chunk c's runs (elements of size bytes) into copies
// of minDirect bytes or more and gathers.
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

// copy gathers the short runs into slot s's staging and queues the
// chunk's copies on q.
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

// input returns chunk i's chunkInput, sorting its runs on first use.
func (pl *pipeline) input(i int, c *chunk.Chunk, size, minDirect int) *chunkInput {
	if pl.inputs[i] == nil {
		in := newChunkInput(c, size, minDirect)
		pl.inputs[i] = &in
	}
	return pl.inputs[i]
}

// spans reads a drained slot's events, chunk i's, against the origin: its
// copy in, kernels and copy out.
func (pl *pipeline) spans(s *slot, i int) []chunk.Span {
	at := func(ev int) (time.Duration, bool) {
		d, err := s.events[ev].Since(pl.origin)
		return d, err == nil
	}
	var out []chunk.Span
	for stage, evs := range [][2]int{{copyInStart, copyInEnd}, {kernelStart, kernelEnd}, {copyOutStart, copyOutEnd}} {
		start, ok1 := at(evs[0])
		end, ok2 := at(evs[1])
		if ok1 && ok2 {
			out = append(out, chunk.Span{Chunk: i, Stage: chunk.Stage(stage), Start: start, End: end})
		}
	}
	return out
}
