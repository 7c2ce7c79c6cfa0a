package chunk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// engines are the CPU methods a chunk's sub-problem runs on.
var engines = []struct {
	name     string
	supports func(*nd.Problem) bool
	new      func(*nd.Problem) (cpu.Executable, error)
}{
	{"direct", func(*nd.Problem) bool { return true },
		func(p *nd.Problem) (cpu.Executable, error) { return cpu.NewDirect(p, cpu.Options{Workers: 1}), nil }},
	{"separable", (*nd.Problem).Separable,
		func(p *nd.Problem) (cpu.Executable, error) { return cpu.NewSeparable(p, cpu.Options{Workers: 1}) }},
}

// budgets are the splits every case is run with: one chunk, one output
// row along axis 0, a few rows, one voxel, and byte budgets around a row.
func budgets(p *nd.Problem) []chunk.Budget {
	row := 1
	for _, n := range p.OutShape[1:] {
		row *= n
	}
	in := 1
	for _, n := range p.InShape[1:] {
		in *= n
	}
	rowBytes := int64(in*p.In.Size() + row*len(p.Kernels)*p.Out.Size())
	return []chunk.Budget{
		{},
		{OutElems: max(row, 1)},
		{OutElems: max(3*row, 1)},
		{OutElems: 1},
		{OutElems: max(row/2, 1)},
		{Bytes: rowBytes * int64(p.KShape[0]+1)},
		{Bytes: rowBytes * int64(p.KShape[0])},
	}
}

// run computes p on src with one engine, chunked by b.
func run(t *testing.T, p *nd.Problem, src nd.Array, b chunk.Budget, newEngine func(*nd.Problem) (cpu.Executable, error)) ([]byte, int) {
	t.Helper()
	chunks, err := chunk.Split(p, b)
	if err != nil {
		if b.Bytes > 0 {
			return nil, 0 // a byte budget below one voxel's halo: refused, fine
		}
		t.Fatalf("split %+v: %v", b, err)
	}
	checkCover(t, p, chunks)
	dst, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		t.Fatal(err)
	}
	err = chunk.Run(context.Background(), chunks, src, nil, func(ctx context.Context, c *chunk.Chunk, src nd.Array) error {
		e, err := newEngine(c.Problem)
		if err != nil {
			return err
		}
		return e.Execute(ctx, c.Output(dst), src)
	})
	if err != nil {
		t.Fatalf("run %+v: %v", b, err)
	}
	return slices.Clone(dst.Bytes()), len(chunks)
}

// checkCover verifies that the chunks write every output element once, in
// order, and that their boxes and offsets agree.
func checkCover(t *testing.T, p *nd.Problem, chunks []chunk.Chunk) {
	t.Helper()
	next := 0
	strides := nd.Strides(p.OutShape)
	for i, c := range chunks {
		if c.OutOffset != next {
			t.Fatalf("chunk %d starts at %d, want %d", i, c.OutOffset, next)
		}
		off := 0
		for d := range c.OutLo {
			off += c.OutLo[d] * strides[d]
		}
		if off*len(p.Kernels) != c.OutOffset {
			t.Fatalf("chunk %d: box %v–%v, offset %d", i, c.OutLo, c.OutHi, c.OutOffset)
		}
		next += c.OutElems
	}
	total, _ := nd.NumElements(p.FullShape())
	if next != total {
		t.Fatalf("chunks cover %d of %d output elements", next, total)
	}
}

func check(t *testing.T, c enginetest.Case) {
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engines {
		if !e.supports(p) {
			continue
		}
		want, _ := run(t, p, c.Input, chunk.Budget{}, e.new)
		for _, b := range budgets(p) {
			got, n := run(t, p, c.Input, b, e.new)
			if got != nil && !bytes.Equal(got, want) {
				t.Errorf("%s, budget %+v (%d chunks): differs from the unchunked result", e.name, b, n)
			}
		}
	}
}

func TestTableChunkedEqualsWhole(t *testing.T) {
	for _, c := range enginetest.Table() {
		t.Run(c.Name, func(t *testing.T) { check(t, c) })
	}
}

func TestRandomChunkedEqualsWhole(t *testing.T) {
	for _, c := range enginetest.Random(7, 200) {
		t.Run(c.Name, func(t *testing.T) { check(t, c) })
	}
}

// TestSplitAxes checks which axes a budget splits: rows of axis 0 when one
// fits, else rows of axis 1 within one row of axis 0, and so on.
func TestSplitAxes(t *testing.T) {
	p := problem(t, nd.Spec{Shape: []int{4, 5, 6}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}})
	for _, tc := range []struct {
		outElems int
		want     int
		box      string
	}{
		{0, 1, "[0 0 0]-[4 5 6]"},
		{60, 2, "[0 0 0]-[2 5 6]"},
		{30, 4, "[0 0 0]-[1 5 6]"},
		{29, 8, "[0 0 0]-[1 4 6]"},
		{12, 12, "[0 0 0]-[1 2 6]"},
		{5, 4 * 5 * 2, "[0 0 0]-[1 1 5]"},
	} {
		chunks, err := chunk.Split(p, chunk.Budget{OutElems: tc.outElems})
		if err != nil {
			t.Fatal(err)
		}
		if box := fmt.Sprintf("%v-%v", chunks[0].OutLo, chunks[0].OutHi); len(chunks) != tc.want || box != tc.box {
			t.Errorf("OutElems %d: %d chunks, the first %s; want %d, %s", tc.outElems, len(chunks), box, tc.want, tc.box)
		}
	}
	if _, err := chunk.Split(p, chunk.Budget{Bytes: 8}); err == nil {
		t.Error("a budget below one voxel's halo: no error")
	}
}

// TestRows checks the rows a chunk reads at the edges for every border:
// mapped by the rule, or real rows with the shift for constant.
func TestRows(t *testing.T) {
	for _, tc := range []struct {
		border nd.Border
		n, k   int
		mode   nd.Mode
		rows   string // of the first chunk of one output row
		shift  int
	}{
		{nd.Reflect, 4, 5, nd.Same, "[1 0 0 1 2]", 0},
		{nd.Mirror, 4, 5, nd.Same, "[2 1 0 1 2]", 0},
		{nd.Nearest, 4, 5, nd.Same, "[0 0 0 1 2]", 0},
		{nd.Wrap, 4, 5, nd.Same, "[2 3 0 1 2]", 0},
		{nd.Constant, 4, 5, nd.Same, "[0 1 2]", 2},
		{nd.Reflect, 1, 4, nd.Full, "[0 0 0 0]", 0},
		{nd.Wrap, 2, 9, nd.Same, "[0 1 0 1 0 1 0 1 0]", 0},
		{nd.Constant, 2, 9, nd.Full, "[0]", 8},
		{nd.Reflect, 6, 3, nd.Valid, "[0 1 2]", 0},
	} {
		p := problem(t, nd.Spec{Shape: []int{tc.n, 3}, In: nd.Float32, Border: tc.border, Mode: tc.mode,
			Kernels: []nd.Kernel{{Shape: []int{tc.k}, Weights: make([]float64, tc.k)}}})
		chunks, err := chunk.Split(p, chunk.Budget{OutElems: 3})
		if err != nil {
			t.Fatal(err)
		}
		c := chunks[0]
		if rows := fmt.Sprint(c.Rows[0]); rows != tc.rows || c.Problem.Shift[0] != tc.shift || c.Problem.InShape[0] != c.Rows[0].Len() {
			t.Errorf("%v n=%d k=%d %v: rows %s shift %d, want %s shift %d", tc.border, tc.n, tc.k, tc.mode, rows, c.Problem.Shift[0], tc.rows, tc.shift)
		}
	}
}

type counter struct{ done, total atomic.Int64 }

func (c *counter) Report(done, total int64) { c.done.Store(done); c.total.Store(total) }

func TestProgressAndCancel(t *testing.T) {
	p := problem(t, nd.Spec{Shape: []int{6, 4}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}})
	chunks, err := chunk.Split(p, chunk.Budget{OutElems: 4})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := nd.New(nd.Float32, 6, 4)
	var progress counter
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err = chunk.Run(ctx, chunks, src, &progress, func(ctx context.Context, c *chunk.Chunk, src nd.Array) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Errorf("cancelled after chunk 2: %v after %d calls", err, calls)
	}
	if progress.done.Load() != 2 || progress.total.Load() != 6 {
		t.Errorf("progress %d/%d, want 2/6", progress.done.Load(), progress.total.Load())
	}
}

func problem(t *testing.T, s nd.Spec) *nd.Problem {
	t.Helper()
	p, err := s.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
