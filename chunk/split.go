package chunk

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// Budget bounds the size of one chunk. Zero fields impose no bound; the
// zero Budget gives one chunk, the whole problem.
type Budget struct {
	// Bytes bounds a chunk's input and output bytes plus its Scratch.
	Bytes int64
	// OutElems bounds a chunk's output elements, not counting the bank
	// axis: the product of OutShape[1:] gives one output row along axis 0
	// per chunk, 1 a chunk per output voxel.
	OutElems int
	// Scratch returns the bytes a sub-problem needs beyond its input and
	// output, such as a GPU's separable temporaries; nil means none. It is
	// called on candidate sub-problems whose shapes are set but whose
	// kernels are p's.
	Scratch func(*nd.Problem) int64
}

// Chunk is one piece of a split problem.
type Chunk struct {
	// Problem computes the chunk's output from its input. It is the whole
	// problem itself when the split gives one chunk.
	Problem *nd.Problem
	// OutLo and OutHi bound the box of the whole output (without the bank
	// axis) the chunk writes: OutLo[d] ≤ i < OutHi[d] on every axis d.
	OutLo, OutHi []int
	// OutOffset and OutElems place the chunk's output in the whole output,
	// in elements with the bank: the box is contiguous in C order.
	OutOffset, OutElems int
	// Rows[d] lists, for each index along axis d of the chunk's input, the
	// real row of the whole input it is, in order; nil means the chunk
	// reads the whole axis as it is.
	Rows []Rows
	// InElems is the number of elements of the chunk's input.
	InElems int

	whole []int // the whole input's shape
}

// Split cuts p's output into chunks within budget, along the slowest axes:
// runs of rows along axis 0 when one row fits, else one row along axis 0
// and runs along axis 1, and so on. It fails when a single output voxel
// with its halo does not fit.
func Split(p *nd.Problem, b Budget) ([]Chunk, error) {
	rank := len(p.OutShape)
	if fits(p, b, -1, 0) || slices.Contains(p.OutShape, 0) {
		return []Chunk{whole(p)}, nil
	}
	for s := range rank {
		r := largestRun(p, b, s)
		if r == 0 {
			continue
		}
		return chunks(p, s, r), nil
	}
	return nil, fmt.Errorf("chunk: one output voxel with its halo (kernel %v) does not fit the budget (%d bytes, %d elements)", p.KShape, b.Bytes, b.OutElems)
}

// whole is the one chunk of a problem that is not split.
func whole(p *nd.Problem) Chunk {
	out, _ := nd.ShapeElements(p.FullShape())
	in, _ := nd.ShapeElements(p.InShape)
	return Chunk{Problem: p, OutLo: make([]int, len(p.OutShape)), OutHi: slices.Clone(p.OutShape),
		OutElems: out, Rows: make([]Rows, len(p.InShape)), InElems: in, whole: p.InShape}
}

// largestRun is the most output rows along axis s a chunk may have, one
// index on every axis before s, or 0 if one row does not fit.
func largestRun(p *nd.Problem, b Budget, s int) int {
	n := p.OutShape[s]
	if fits(p, b, s, n) {
		return n
	}
	lo, hi := 0, n-1 // fits(lo) holds (0 trivially), fits(hi+1) does not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(p, b, s, mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// fits reports whether a chunk of r output rows along axis s (one index
// before it, all after it) is within budget; s = −1 is the whole problem.
func fits(p *nd.Problem, b Budget, s, r int) bool {
	if r == 0 && s >= 0 {
		return true
	}
	q := *p
	q.InShape, q.OutShape = slices.Clone(p.InShape), slices.Clone(p.OutShape)
	for d := 0; d <= s; d++ {
		o := 1
		if d == s {
			o = r
		}
		if o == p.OutShape[d] {
			continue
		}
		q.OutShape[d] = o
		q.InShape[d] = o + p.KShape[d] - 1 // the most rows a run of o reads
		if p.Border == nd.Constant {
			q.InShape[d] = min(q.InShape[d], p.InShape[d])
		}
	}
	outElems := 1
	for _, o := range q.OutShape {
		outElems *= o
	}
	if b.OutElems > 0 && outElems > b.OutElems {
		return false
	}
	if b.Bytes <= 0 {
		return true
	}
	inElems := 1
	for _, n := range q.InShape {
		inElems *= n
	}
	bytes := int64(inElems)*int64(p.In.Size()) + int64(outElems*len(p.Kernels))*int64(p.Out.Size())
	if b.Scratch != nil {
		bytes += b.Scratch(&q)
	}
	return bytes <= b.Bytes
}

// chunks enumerates the chunks of r output rows along axis s.
func chunks(p *nd.Problem, s, r int) []Chunk {
	rank := len(p.OutShape)
	outer := 1 // output indices over the axes before s
	for d := range s {
		outer *= p.OutShape[d]
	}
	bank := len(p.Kernels)
	strides := nd.Strides(p.OutShape)
	var out []Chunk
	idx := make([]int, s)
	for range outer {
		for o0 := 0; o0 < p.OutShape[s]; o0 += r {
			c := Chunk{OutLo: make([]int, rank), OutHi: slices.Clone(p.OutShape), Rows: make([]Rows, rank), whole: p.InShape}
			for d := range s {
				c.OutLo[d], c.OutHi[d] = idx[d], idx[d]+1
			}
			c.OutLo[s], c.OutHi[s] = o0, min(o0+r, p.OutShape[s])
			c.Problem = subProblem(p, &c)
			for d, lo := range c.OutLo {
				c.OutOffset += lo * strides[d]
			}
			c.OutOffset *= bank
			c.OutElems, _ = nd.ShapeElements(c.Problem.FullShape())
			c.InElems, _ = nd.ShapeElements(c.Problem.InShape)
			out = append(out, c)
		}
		for d := s - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < p.OutShape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// subProblem sets c.Rows and returns the problem computing c's box.
func subProblem(p *nd.Problem, c *Chunk) *nd.Problem {
	q := *p
	q.InShape, q.OutShape, q.Shift = slices.Clone(p.InShape), slices.Clone(p.OutShape), slices.Clone(p.Shift)
	for d := range p.OutShape {
		o0, o1 := c.OutLo[d], c.OutHi[d]
		if o0 == 0 && o1 == p.OutShape[d] {
			continue // the whole axis, as it is
		}
		rows, shift := axisRows(p, d, o0, o1)
		c.Rows[d] = rows
		q.InShape[d], q.OutShape[d], q.Shift[d] = rows.Len(), o1-o0, shift
	}
	return &q
}

// axisRows returns the input rows along axis d that output rows [o0, o1)
// read, and the shift that makes the sub-problem read them as the whole
// problem does.
func axisRows(p *nd.Problem, d, o0, o1 int) (rows Rows, shift int) {
	n, k, sh := p.InShape[d], p.KShape[d], p.Shift[d]
	first, last := o0-sh, o1-1+k-1-sh // positions read
	if p.Border == nd.Constant || (first >= 0 && last < n) {
		// Real rows only; the shift leaves the rest outside, where the
		// sub-problem's border gives what the whole one's does (cval).
		lo, hi := max(first, 0), min(last, n-1)
		if lo > hi {
			// Every position read is outside: one real row keeps the
			// sub-problem well formed, and the shift leaves it unread.
			lo, hi = 0, 0
		}
		return Rows{{First: lo, N: hi - lo + 1}}, sh - o0 + lo
	}
	// The positions outside the input (fewer than the kernel's taps on
	// each side) are mapped one by one; those inside are one run.
	for i := first; i <= min(last, -1); i++ {
		m, _ := p.Border.Index(i, n)
		rows = rows.add(m, 1)
	}
	if lo, hi := max(first, 0), min(last, n-1); lo <= hi {
		rows = rows.add(lo, hi-lo+1)
	}
	for i := max(first, n); i <= last; i++ {
		m, _ := p.Border.Index(i, n)
		rows = rows.add(m, 1)
	}
	return rows, 0
}

// Rows lists real rows of the whole input in order, as runs of
// consecutive rows: a chunk of a 1-D array reads millions of consecutive
// rows (its elements), which a list of row numbers would hold at 8 bytes
// each, more than the chunk's data.
type Rows []RowRun

// RowRun is N consecutive rows from First.
type RowRun struct{ First, N int }

// Len is the number of rows listed.
func (r Rows) Len() int {
	n := 0
	for _, run := range r {
		n += run.N
	}
	return n
}

// String lists every row, as fmt prints a []int.
func (r Rows) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for _, run := range r {
		for i := range run.N {
			if b.Len() > 1 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(run.First + i))
		}
	}
	b.WriteByte(']')
	return b.String()
}

// add appends n rows from first, extending the last run where they follow
// it.
func (r Rows) add(first, n int) Rows {
	if l := len(r) - 1; l >= 0 && r[l].First+r[l].N == first {
		r[l].N += n
		return r
	}
	return append(r, RowRun{first, n})
}
