package zarr

import "slices"

// runs maps a chunk's bytes, in C order (as its codecs hold them), to
// where they are in a region: the rows of the box w of the chunk that
// the region holds, each a run of bytes contiguous in both, rows merged
// where the box takes trailing axes whole in both. The codecs of the
// chunk read and write their blocks straight from and to the region's
// rows through it (blosc's shuffle and unshuffle, a raw chunk's copy),
// where a chunk buffer and a copy of the box between it and the region
// were a quarter of streaming a Blosc-compressed volume.
//
// A cursor walks the runs in order: each (and the methods built on it)
// takes ranges of the chunk's bytes in increasing order, each from where
// the last ended or later; one that starts before starts the walk again.
type runs struct {
	b    []byte // the region's bytes
	size int    // bytes of the whole chunk
	run  int    // bytes of each run
	// outer are the extents of the axes the runs step over (w's, before
	// the merged ones), cstep and rstep their strides in bytes in the
	// chunk and in the region.
	outer, cstep, rstep []int
	c0, r0              int // the first run's offsets in the chunk and the region

	// The cursor: the run idx (an index over outer), at c in the chunk
	// and r in the region; end when past the last.
	idx  []int
	c, r int
	end  bool
	to   int // the last range's end: a range before it starts the walk again
}

// newRuns maps the bytes of the chunk at lo of shape (elements of es
// bytes) to box w (inside the chunk) of out, whose strides are C order
// over whole rows (its last axis' stride 1). ok is false where out is not
// such a region.
func newRuns(out region, lo, shape []int, w box, es int) (r *runs, ok bool) {
	rank := len(shape)
	r = &runs{b: out.b, size: prod(shape) * es}
	if w.empty() {
		r.end = true
		return r, true
	}
	if rank == 0 {
		r.run = es
		r.reset()
		return r, true
	}
	if out.strides[rank-1] != 1 {
		return nil, false
	}
	cs := cStrides(shape)
	ext := w.shape()
	inner := rank - 1
	n := ext[inner]
	for inner > 0 && ext[inner] == shape[inner] && out.strides[inner-1] == out.strides[inner]*ext[inner] {
		inner--
		n *= ext[inner]
	}
	r.run = n * es
	r.outer = ext[:inner]
	r.cstep, r.rstep = make([]int, inner), make([]int, inner)
	for d := range inner {
		r.cstep[d], r.rstep[d] = cs[d]*es, out.strides[d]*es
	}
	r.c0 = offset(w.lo, lo, cs) * es
	r.r0 = offset(w.lo, out.origin, out.strides) * es
	r.idx = make([]int, inner)
	r.reset()
	return r, true
}

// reset puts the cursor on the first run.
func (r *runs) reset() {
	clear(r.idx)
	r.c, r.r, r.end, r.to = r.c0, r.r0, false, 0
}

// next moves the cursor to the next run.
func (r *runs) next() {
	for d := len(r.idx) - 1; d >= 0; d-- {
		r.idx[d]++
		r.c += r.cstep[d]
		r.r += r.rstep[d]
		if r.idx[d] < r.outer[d] {
			return
		}
		r.c -= r.outer[d] * r.cstep[d]
		r.r -= r.outer[d] * r.rstep[d]
		r.idx[d] = 0
	}
	r.end = true
}

// each calls fn for each part of the chunk's bytes [from, to) a run
// holds, in order: at is the part's offset from from, rb its bytes in the
// region.
func (r *runs) each(from, to int, fn func(at int, rb []byte)) {
	if from < r.to {
		r.reset()
	}
	r.to = to
	for !r.end && r.c+r.run <= from {
		r.next()
	}
	for !r.end && r.c < to {
		s, t := max(r.c, from), min(r.c+r.run, to)
		fn(s-from, r.b[r.r+s-r.c:r.r+t-r.c])
		if r.c+r.run > to {
			return // the run goes on in the next range
		}
		r.next()
	}
}

// whole is the region's bytes for the chunk's bytes [from, to) when one
// run holds them all, else nil.
func (r *runs) whole(from, to int) []byte {
	var w []byte
	parts := 0
	r.each(from, to, func(at int, rb []byte) {
		if parts++; at == 0 && len(rb) == to-from {
			w = rb
		}
	})
	if parts != 1 {
		return nil
	}
	return w
}

// scatter copies src, the chunk's bytes from off on, to the region.
func (r *runs) scatter(src []byte, off int) {
	r.each(off, off+len(src), func(at int, rb []byte) { copy(rb, src[at:]) })
}

// gather copies the chunk's bytes from off on, len(dst) of them, from the
// region into dst (the bytes w does not hold left as they are).
func (r *runs) gather(dst []byte, off int) {
	r.each(off, off+len(dst), func(at int, rb []byte) { copy(dst[at:], rb) })
}

// unshuffle undoes blosc's byte shuffle of the block of the chunk's
// bytes at off (its rows: row j holds byte j of each element of ts bytes)
// into the region: unshuffleBytes, each run's elements written where they
// go. Every run and the block are whole elements (shuffleAligned).
func (r *runs) unshuffle(rows [][]byte, off, ts int) {
	r.each(off, off+len(rows[0])*ts, func(at int, rb []byte) { unshuffleAt(rb, rows, at/ts, ts) })
}

// shuffle is unshuffle's inverse: blosc's byte shuffle of the chunk's
// bytes [off, off+len(dst)) from the region into dst.
func (r *runs) shuffle(dst []byte, off, ts int) {
	n := len(dst) / ts
	r.each(off, off+len(dst), func(at int, rb []byte) { shuffleAt(dst, rb, n, at/ts, ts) })
}

// shuffleAligned reports whether blosc's byte shuffle by elements of ts
// bytes, in blocks of blocksize bytes, cuts no run of the chunk's bytes
// inside an element (runs of elements of es bytes): then unshuffle and
// shuffle serve, and every block is whole elements.
func (r *runs) shuffleAligned(ts, blocksize int) bool {
	return ts > 0 && r.run%ts == 0 && r.c0%ts == 0 && blocksize%ts == 0 && r.size%ts == 0 &&
		!slices.ContainsFunc(r.cstep, func(s int) bool { return s%ts != 0 })
}

// allFill reports whether every element the runs hold is fill (one
// element's bytes).
func (r *runs) allFill(fill []byte) bool {
	all := true
	r.each(0, r.size, func(_ int, rb []byte) { all = all && allFill(rb, fill) })
	return all
}
