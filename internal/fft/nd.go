package fft

// RealND is a plan for N-D real transforms of one shape, several at once:
// batch independent arrays of that shape, stored one after another.
//
// The forward transform runs the real transform along the last axis (rows
// of n real values become n/2+1 coefficients), then complex transforms
// along every other axis, last to first; the spectrum of one array is
// shape[:rank−1] × (shape[rank−1]/2+1) complex values in C order. Rows
// are shared among the workers in groups, every other axis in chunks of
// columns.
type RealND struct {
	shape   []int
	batch   int
	rows    realRows
	axes    []stages // axes 0 … rank−2
	workers int
	// Per worker: two row-group buffers, and two column-chunk buffers.
	scratch, colScratch [][]complex64
}

// NewRealND returns a plan for batch arrays of the given shape, run on up
// to workers goroutines (0: GOMAXPROCS). It panics if a length is < 1 or
// the last axis has odd length.
func NewRealND(batch int, shape []int, workers int) *RealND {
	rank := len(shape)
	if rank == 0 || batch < 1 || shape[rank-1]%2 != 0 {
		panic("fft: RealND needs a batch ≥ 1 and an even last axis")
	}
	t := &RealND{shape: append([]int(nil), shape...), batch: batch, rows: newRealRows(shape[rank-1]), workers: defaultWorkers(workers)}
	for _, n := range shape[:rank-1] {
		if n < 1 {
			panic("fft: length < 1")
		}
		t.axes = append(t.axes, newStages(n))
	}
	return t
}

// SpectrumLen is the number of complex values Forward writes: batch ×
// shape[:rank−1] × (shape[rank−1]/2 + 1).
func (t *RealND) SpectrumLen() int { return t.lines() * (t.rows.h + 1) }

// Len is the number of real values of the batch.
func (t *RealND) Len() int { return t.lines() * t.rows.n }

// lines is the number of rows along the last axis.
func (t *RealND) lines() int {
	n := t.batch
	for _, s := range t.shape[:len(t.shape)-1] {
		n *= s
	}
	return n
}

func (t *RealND) rowScratch(w int) (z, work []complex64) {
	for len(t.scratch) <= w {
		n := t.rows.scratchLen(rowGroup)
		t.scratch = append(t.scratch, make([]complex64, 2*n))
	}
	s := t.scratch[w]
	return s[:len(s)/2], s[len(s)/2:]
}

// Forward transforms src (Len values) into dst (SpectrumLen values). It
// panics if a length is wrong.
func (t *RealND) Forward(dst []complex64, src []float32) {
	if len(src) != t.Len() || len(dst) != t.SpectrumLen() {
		panic("fft: length mismatch")
	}
	n, h1 := t.rows.n, t.rows.h+1
	t.rowGroups(func(first, g int, z, work []complex64) {
		t.rows.forward(dst[first*h1:], h1, src[first*n:], n, g, z, work)
	})
	for d := len(t.axes) - 1; d >= 0; d-- {
		t.columns(dst, d, false)
	}
}

// Inverse transforms the spectrum src back into dst, unnormalised (each
// array times the product of the shape). It overwrites src.
func (t *RealND) Inverse(dst []float32, src []complex64) {
	if len(dst) != t.Len() || len(src) != t.SpectrumLen() {
		panic("fft: length mismatch")
	}
	for d := range t.axes {
		t.columns(src, d, true)
	}
	n, h1 := t.rows.n, t.rows.h+1
	t.rowGroups(func(first, g int, z, work []complex64) {
		t.rows.inverse(dst[first*n:], n, src[first*h1:], h1, g, z, work)
	})
}

// rowGroups calls fn for every group of up to rowGroup rows along the
// last axis, from row first, g rows, on the workers, each with its own
// scratch.
func (t *RealND) rowGroups(fn func(first, g int, z, work []complex64)) {
	// Every worker's buffers exist before the workers start, so that none
	// grows t.scratch concurrently.
	t.rowScratch(t.workers - 1)
	lines := t.lines()
	parallelFor(t.workers, ceilDiv(lines, rowGroup), func(w, item int) {
		z, work := t.rowScratch(w)
		first := item * rowGroup
		fn(first, min(rowGroup, lines-first), z, work)
	})
}

// columnBytes bounds the two buffers a column work item transforms in:
// its chunk of columns is gathered into a contiguous n × chunk block, so
// the passes run in cache whatever the stride between elements (strides
// of a power of two would otherwise map every element to a few cache
// sets).
const columnBytes = 256 << 10

// columnChunk is the number of columns one work item of a length-n column
// pass transforms: as many as fit columnBytes, 8 to 64 (a cache line of
// complex64 values to eight).
func columnChunk(n int) int { return max(8, min(64, columnBytes/(16*n)/8*8)) }

// columns transforms x along axis d < rank−1 in place.
func (t *RealND) columns(x []complex64, d int, inverse bool) {
	n := t.shape[d]
	if n == 1 {
		return
	}
	outer := t.batch
	for _, s := range t.shape[:d] {
		outer *= s
	}
	vl := t.rows.h + 1
	for _, s := range t.shape[d+1 : len(t.shape)-1] {
		vl *= s
	}
	chunks := ceilDiv(vl, columnChunk(n))
	chunk := lanesFor(ceilDiv(vl, chunks))
	chunks = ceilDiv(vl, chunk)
	st := &t.axes[d]
	for len(t.colScratch) < t.workers {
		t.colScratch = append(t.colScratch, nil)
	}
	parallelFor(t.workers, outer*chunks, func(w, item int) {
		o, c := item/chunks, item%chunks
		c0, c1 := c*chunk, min(vl, (c+1)*chunk)
		// The chunk's g columns sit at a stride of gs (the lanes past g
		// hold stale values, transformed on their own).
		g := c1 - c0
		gs := lanesFor(g)
		if len(t.colScratch[w]) < 2*n*chunk {
			t.colScratch[w] = make([]complex64, 2*n*chunk)
		}
		local, work := t.colScratch[w][:n*gs], t.colScratch[w][n*chunk:][:n*gs]
		base := o * n * vl
		for i := range n {
			copy(local[i*gs:i*gs+g], x[base+i*vl+c0:base+i*vl+c1])
		}
		st.run(local, work, gs, 0, gs, inverse)
		for i := range n {
			copy(x[base+i*vl+c0:base+i*vl+c1], local[i*gs:i*gs+g])
		}
	})
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
