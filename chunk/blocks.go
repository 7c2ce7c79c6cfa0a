package chunk

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Grid cuts a problem's output into N-D blocks: boxes of one shape on
// every axis (the last along an axis may be shorter), numbered in C order
// over the grid. Unlike Split, which cuts along the slowest axes so that a
// chunk's output is one contiguous range, a Grid cuts every axis, so that
// blocks can follow a storage layout (Zarr chunks and shards) and keep a
// halo's share small on every axis.
//
// Block(i) is a pure function of the problem and i: any worker, process or
// re-run computes the same block the same way, and the blocks put
// together equal the unsplit result bit for bit for the exact methods
// (the sub-problems obey the same rules as Split's chunks, see the package
// doc).
type Grid struct {
	p     *nd.Problem
	shape []int // a block's output extent per axis
	count []int // blocks per axis
	n     int   // blocks in all
}

// NewGrid cuts p's output into blocks of shape (one extent per axis of the
// output, without the bank axis; an extent larger than the output's is the
// whole axis). An output with an axis of length 0 has no block.
func NewGrid(p *nd.Problem, shape []int) (*Grid, error) {
	rank := len(p.OutShape)
	if len(shape) != rank {
		return nil, &nd.ArgumentError{Arg: "block shape", Msg: fmt.Sprintf("%v has %d axes, the output %v has %d", shape, len(shape), p.OutShape, rank)}
	}
	g := &Grid{p: p, shape: make([]int, rank), count: make([]int, rank), n: 1}
	for d, b := range shape {
		if b < 1 {
			return nil, &nd.ArgumentError{Arg: "block shape", Msg: fmt.Sprintf("%v: an extent below 1 on axis %d", shape, d)}
		}
		g.shape[d] = min(b, max(p.OutShape[d], 1))
		g.count[d] = (p.OutShape[d] + g.shape[d] - 1) / g.shape[d]
		g.n *= g.count[d]
	}
	return g, nil
}

// GridFor cuts p's output into the largest blocks whose input (halo
// included) and output take at most bytes each, every extent a multiple of
// align's (one per output axis, as the storage's chunks or shards; nil or
// 0 on an axis means 1) unless it is the whole axis, so that each block
// writes whole storage chunks. It halves the longest extent first (the
// slowest axis among equals), which keeps blocks near cubes and the halo's
// share small. It fails when blocks of align's shape do not fit.
func GridFor(p *nd.Problem, bytes int64, align []int) (*Grid, error) {
	rank := len(p.OutShape)
	if align != nil && len(align) != rank {
		return nil, &nd.ArgumentError{Arg: "block alignment", Msg: fmt.Sprintf("%v has %d axes, the output %v has %d", align, len(align), p.OutShape, rank)}
	}
	unit := make([]int, rank)
	shape := make([]int, rank)
	for d := range rank {
		unit[d] = 1
		if align != nil && align[d] > 0 {
			unit[d] = align[d]
		}
		shape[d] = max(p.OutShape[d], 1)
	}
	for BlockBytes(p, shape) > bytes {
		best := -1
		for d := range rank {
			if shape[d] > unit[d] && (best < 0 || shape[d] > shape[best]) {
				best = d
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("chunk: a block of %v (kernel %v) takes %d bytes, more than the budget of %d", shape, p.KShape, BlockBytes(p, shape), bytes)
		}
		u := unit[best]
		shape[best] = max(u, ((shape[best]+1)/2+u-1)/u*u)
	}
	return NewGrid(p, shape)
}

// BlockBytes is the bytes of one block of output extents shape: its
// input, halo included, and its output with the bank axis.
func BlockBytes(p *nd.Problem, shape []int) int64 {
	in, out := int64(p.In.Size()), int64(p.Out.Size()*len(p.Kernels))
	for d, o := range shape {
		n := p.InShape[d]
		if o < p.OutShape[d] {
			n = o + p.KShape[d] - 1 // the most rows a run of o reads
			if p.Border == nd.Constant {
				n = min(n, p.InShape[d])
			}
		}
		in *= int64(n)
		out *= int64(min(o, p.OutShape[d]))
	}
	return in + out
}

// Len is the number of blocks.
func (g *Grid) Len() int { return g.n }

// Shape is a block's output extent per axis (the last block along an axis
// may be shorter).
func (g *Grid) Shape() []int { return slices.Clone(g.shape) }

// Counts is the number of blocks along each axis.
func (g *Grid) Counts() []int { return slices.Clone(g.count) }

// Problem is the problem the grid cuts.
func (g *Grid) Problem() *nd.Problem { return g.p }

// Block is one block of a Grid.
type Block struct {
	// Index is the block's number in the grid, in C order.
	Index int
	// Problem computes the block's output from its input; it is the whole
	// problem itself when the grid has one block.
	Problem *nd.Problem
	// OutLo and OutHi bound the box of the whole output (without the bank
	// axis) the block writes: OutLo[d] ≤ i < OutHi[d] on every axis d.
	OutLo, OutHi []int
	// Rows[d] lists, for each index along axis d of the block's input, the
	// real row of the whole input it is, in order; nil means the whole
	// axis as it is. The border rule has mapped every row outside the
	// input to the row it reads (wrap reads the far side), except for
	// the Constant border, whose sub-problem places cval there itself.
	Rows []Rows
	// InElems and OutElems are the elements of the block's input and
	// output (the bank axis included).
	InElems, OutElems int

	whole []int // the whole input's shape
}

// Block returns block i (0 ≤ i < Len()): its output box, the input rows
// it reads per axis and its sub-problem, computed from the problem and i
// alone. It panics for an i out of range, as an index does.
func (g *Grid) Block(i int) Block {
	if i < 0 || i >= g.n {
		panic(fmt.Sprintf("chunk: block %d of a grid of %d", i, g.n))
	}
	rank := len(g.shape)
	c := Chunk{OutLo: make([]int, rank), OutHi: make([]int, rank), Rows: make([]Rows, rank), whole: g.p.InShape}
	rest := i
	for d := rank - 1; d >= 0; d-- {
		j := rest % g.count[d]
		rest /= g.count[d]
		c.OutLo[d] = j * g.shape[d]
		c.OutHi[d] = min(c.OutLo[d]+g.shape[d], g.p.OutShape[d])
	}
	q := g.p
	if g.n > 1 {
		q = subProblem(g.p, &c)
	}
	b := Block{Index: i, Problem: q, OutLo: c.OutLo, OutHi: c.OutHi, Rows: c.Rows, whole: g.p.InShape}
	b.InElems, _ = nd.ShapeElements(q.InShape)
	b.OutElems, _ = nd.ShapeElements(q.FullShape())
	return b
}

// OutStart is where the block's output starts in the whole output, with
// the bank axis (0 there) when the problem has one: the start a Sink gets.
func (b *Block) OutStart() []int {
	start := slices.Clone(b.OutLo)
	if b.Problem.Bank {
		start = append(start, 0)
	}
	return start
}

// Regions calls fn for each box of real input rows the block reads: start
// and shape place the box in the whole input, at where it goes in the
// block's input (of shape Problem.InShape). The boxes tile the block's
// input; an interior block, or any block of a Constant border, reads one.
func (b *Block) Regions(fn func(start, shape, at []int)) {
	rank := len(b.whole)
	runs := make([]Rows, rank)
	for d := range rank {
		runs[d] = b.Rows[d]
		if runs[d] == nil {
			runs[d] = Rows{{0, b.whole[d]}}
		}
		if len(runs[d]) == 0 {
			return
		}
	}
	idx := make([]int, rank) // which run along each axis
	start, shape, at := make([]int, rank), make([]int, rank), make([]int, rank)
	for {
		for d := range rank {
			r := runs[d][idx[d]]
			start[d], shape[d] = r.First, r.N
			at[d] = 0
			for _, prev := range runs[d][:idx[d]] {
				at[d] += prev.N
			}
		}
		fn(start, shape, at)
		d := rank - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < len(runs[d]) {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// CopyBox copies the box of extents shape at srcAt in src (C-order bytes
// of shape srcShape, elements of size bytes) to dstAt in dst (of shape
// dstShape). Trailing axes both arrays hold whole are copied as one run.
func CopyBox(dst []byte, dstShape, dstAt []int, src []byte, srcShape, srcAt []int, shape []int, size int) {
	rank := len(shape)
	if slices.Contains(shape, 0) {
		return
	}
	// Merge trailing axes the box covers whole in both arrays: their
	// elements are one contiguous run in each.
	inner := rank - 1
	run := size
	for inner > 0 && shape[inner] == srcShape[inner] && shape[inner] == dstShape[inner] {
		run *= shape[inner]
		inner--
	}
	if rank == 0 {
		copy(dst[:size], src[:size])
		return
	}
	run *= shape[inner]
	ss, ds := nd.Strides(srcShape), nd.Strides(dstShape)
	so, do := 0, 0 // the first run's, in bytes
	for d := range inner + 1 {
		so += srcAt[d] * ss[d] * size
		do += dstAt[d] * ds[d] * size
	}
	if inner == 0 {
		copy(dst[do:do+run], src[so:so+run])
		return
	}
	// The runs along axis inner-1 in a loop of their own, offsets stepped
	// by its strides; the axes before it by an odometer.
	last := inner - 1
	n, sstep, dstep := shape[last], ss[last]*size, ds[last]*size
	idx := make([]int, last)
	for {
		copyRuns(dst, do, dstep, src, so, sstep, n, run)
		d := last - 1
		for ; d >= 0; d-- {
			so += ss[d] * size
			do += ds[d] * size
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			so -= shape[d] * ss[d] * size
			do -= shape[d] * ds[d] * size
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// copyRuns copies n runs of run bytes, from src at so on by sstep to dst
// at do on by dstep. Runs of 4, 8 and 16 bytes (a halo's one or two
// columns, a shell's face across the last axis) are single moves: copy's
// call for each cost ~20 ns, 16,384 of them for a face of a 128³ chunk.
func copyRuns(dst []byte, do, dstep int, src []byte, so, sstep, n, run int) {
	switch run {
	case 4:
		for range n {
			*(*[4]byte)(dst[do:]) = *(*[4]byte)(src[so:])
			so, do = so+sstep, do+dstep
		}
	case 8:
		for range n {
			*(*[8]byte)(dst[do:]) = *(*[8]byte)(src[so:])
			so, do = so+sstep, do+dstep
		}
	case 16:
		for range n {
			*(*[16]byte)(dst[do:]) = *(*[16]byte)(src[so:])
			so, do = so+sstep, do+dstep
		}
	default:
		for range n {
			copy(dst[do:do+run], src[so:so+run])
			so, do = so+sstep, do+dstep
		}
	}
}
