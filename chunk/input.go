package chunk

import (
	"context"
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Runs calls fn for each run of n consecutive elements of the chunk's
// input, in order: from is the run's first element in the whole input, to
// in the chunk's input. Consecutive real rows make one run, so a chunk of
// whole rows along axis 0 is a single run.
func (c *Chunk) Runs(fn func(from, to, n int)) {
	last, block := c.lastNarrowed(), c.RowElems()
	if last < 0 {
		if block > 0 {
			fn(0, 0, block)
		}
		return
	}
	if block == 0 {
		return
	}
	// The axes before the last narrowed one list their rows one by one:
	// each is narrowed to one output index (or is that one index whole),
	// so it reads a kernel's extent of rows at most.
	rows := make([][]int, last)
	for d := range rows {
		if c.Rows[d] == nil {
			rows[d] = make([]int, c.whole[d])
			for i := range rows[d] {
				rows[d][i] = i
			}
			continue
		}
		for _, r := range c.Rows[d] {
			for i := range r.N {
				rows[d] = append(rows[d], r.First+i)
			}
		}
		if len(rows[d]) == 0 {
			return
		}
	}
	strides := nd.Strides(c.whole)
	idx := make([]int, last) // position over the axes before last
	to := 0
	for {
		base := 0
		for d, i := range idx {
			base += rows[d][i] * strides[d]
		}
		for _, r := range c.Rows[last] {
			fn(base+r.First*strides[last], to, r.N*block)
			to += r.N * block
		}
		d := last - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < len(rows[d]) {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// RowElems is the length of the rows the chunk's input is made of: the
// elements of the whole input behind the last axis the chunk narrows (all
// of them when it narrows none). Every run of Runs is whole rows.
func (c *Chunk) RowElems() int {
	n := 1
	for d := c.lastNarrowed() + 1; d < len(c.whole); d++ {
		n *= c.whole[d]
	}
	return n
}

// lastNarrowed is the last axis whose rows the chunk lists, or −1.
func (c *Chunk) lastNarrowed() int {
	last := -1
	for d, r := range c.Rows {
		if r != nil {
			last = d
		}
	}
	return last
}

// Span reports whether the chunk's input is one run of the whole input,
// and where it starts: then a view of the whole input serves as the
// chunk's input, with no copy.
func (c *Chunk) Span() (from int, ok bool) {
	runs := 0
	c.Runs(func(f, _, _ int) {
		from = f
		runs++
	})
	return from, runs <= 1
}

// Input returns the chunk's input from the whole input src: a view when it
// is one run, otherwise the rows gathered into buf when buf holds them (of
// src's dtype and InElems or more elements), or into a new array.
func (c *Chunk) Input(src nd.Array, buf any) nd.Array {
	shape := c.Problem.InShape
	if from, ok := c.Span(); ok {
		return nd.Array{Shape: shape, Data: nd.SliceData(src.Data, from, from+c.InElems)}
	}
	size := src.DType().Size()
	if nd.DTypeOf(buf) != src.DType() || len(nd.Array{Data: buf}.Bytes()) < c.InElems*size {
		a, _ := nd.New(src.DType(), c.InElems)
		buf = a.Data
	}
	dst := nd.SliceData(buf, 0, c.InElems)
	c.Gather(nd.Array{Data: dst}.Bytes(), src.Bytes(), size)
	return nd.Array{Shape: shape, Data: dst}
}

// Output returns the part of the whole output dst the chunk writes, as an
// array of the chunk's full output shape (a view, no copy).
func (c *Chunk) Output(dst nd.Array) nd.Array {
	return nd.Array{Shape: c.Problem.FullShape(), Data: nd.SliceData(dst.Data, c.OutOffset, c.OutOffset+c.OutElems)}
}

// Run runs the chunks in order: exec computes each chunk's sub-problem from
// its input, taken from the whole input src (see Input), and puts its
// output where it goes (see Output). Run checks ctx between chunks and
// reports chunks done out of the total to progress (which may be nil).
func Run(ctx context.Context, chunks []Chunk, src nd.Array, progress nd.Progress,
	exec func(ctx context.Context, c *Chunk, src nd.Array) error) error {
	var buf any
	for i := range chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := &chunks[i]
		in := c.Input(src, buf)
		if _, view := c.Span(); !view {
			buf = in.Data
		}
		if err := exec(ctx, c, in); err != nil {
			if len(chunks) > 1 {
				return fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
			}
			return err
		}
		if progress != nil {
			progress.Report(int64(i+1), int64(len(chunks)))
		}
	}
	return nil
}

// SameGeometry reports whether two sub-problems of one problem have the
// same shapes and shifts, so that one prepared engine runs both.
func SameGeometry(a, b *nd.Problem) bool {
	return slices.Equal(a.InShape, b.InShape) && slices.Equal(a.OutShape, b.OutShape) && slices.Equal(a.Shift, b.Shift)
}
