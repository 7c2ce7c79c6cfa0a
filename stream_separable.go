package ndconv

import (
	"context"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// Streaming a separable kernel that spans axis 0 and another axis.
//
// Halo'd chunks along axis 0 each run every pass of the separable method
// on their input rows, halo included: a chunk of R output planes with a
// kernel of K0 taps along axis 0 runs the passes along the other axes on
// R + K0 − 1 planes, so small chunks repeat most of the work (256×1024×1024
// float32 with gaussian:sigma=1.5, K0 = 13, in chunks of 2 planes: the
// passes along axes 2 and 1 ran 7 times per plane). Instead the stream
// splits the problem in two:
//
//   - planes: the passes along every axis but 0, one input plane (index
//     along axis 0) at a time, into the accumulator type (float32, or
//     float64 for a Wide problem) — the separable method's intermediate,
//     stored exactly as it keeps it;
//   - across: the pass along axis 0 over those planes into the output, cut
//     into chunks along axis 0 (chunk.Split) whose input rows are planes.
//
// Each chunk's input is assembled in one buffer: planes the previous chunk
// computed (its halo) move to the front, the others are computed once from
// the input. Every input plane's passes run once (twice at most at a
// border that maps rows back), the intermediate never exceeds one chunk's
// planes, and each output value is the same taps times the same values in
// the same order as in the whole problem: the same bits.

// separableStream is the two problems of a streamed separable kernel.
type separableStream struct {
	planes, across *nd.Problem
	acc            nd.DType // the accumulator type: the planes' dtype
	planeIn        int      // elements of one input plane
	planeAcc       int      // elements of one intermediate plane
	planeOut       int      // elements of one output plane
}

// newSeparableStream returns the split of p, or nil where it does not
// apply: not the CPU's separable method, a bank, complex or float16 data,
// or a kernel that does not span axis 0 and another axis (chunks along
// axis 0 then repeat no pass).
func newSeparableStream(p *nd.Problem, exec *plan.Executable) *separableStream {
	if exec.Device.GPU() || exec.Method != plan.Separable || len(p.Kernels) != 1 || p.Bank || !p.Separable() ||
		len(p.InShape) < 2 || p.KShape[0] < 2 || p.In.IsComplex() || p.Out.IsComplex() ||
		p.In == nd.Float16 || p.Out == nd.Float16 {
		return nil
	}
	rank := len(p.InShape)
	other := false
	for d := 1; d < rank; d++ {
		other = other || p.KShape[d] > 1
	}
	if !other {
		return nil
	}
	acc := nd.Float32
	if p.Wide {
		acc = nd.Float64
	}
	f := p.Kernels[0].Factors
	one := []float64{1}

	planes := *p
	planes.Out = acc
	planes.OutShape = slices.Clone(p.OutShape)
	planes.OutShape[0] = p.InShape[0]
	planes.KShape = slices.Clone(p.KShape)
	planes.KShape[0] = 1
	planes.Shift = slices.Clone(p.Shift)
	planes.Shift[0] = 0
	pf := slices.Clone(f)
	pf[0] = one
	planes.Kernels = []nd.Weights{{Factors: pf, Dense: outerProduct(pf)}}

	across := *p
	across.In = acc
	across.InShape = slices.Clone(planes.OutShape)
	across.KShape = make([]int, rank)
	across.Shift = make([]int, rank)
	af := make([][]float64, rank)
	for d := range rank {
		across.KShape[d], af[d] = 1, one
	}
	across.KShape[0], across.Shift[0], af[0] = p.KShape[0], p.Shift[0], f[0]
	across.Kernels = []nd.Weights{{Factors: af, Dense: slices.Clone(f[0])}}
	// The value outside an intermediate with the constant border: cval
	// times the sums of the factors already applied, in the separable
	// method's pass order (the last axis first) and arithmetic.
	cval := p.CVal
	for d := rank - 1; d >= 1; d-- {
		if p.KShape[d] > 1 {
			sum := 0.0
			for _, v := range f[d] {
				sum += v
			}
			cval *= sum
		}
	}
	across.CVal = cval

	s := &separableStream{planes: &planes, across: &across, acc: acc}
	s.planeIn, _ = nd.ShapeElements(p.InShape[1:])
	s.planeAcc, _ = nd.ShapeElements(across.InShape[1:])
	s.planeOut, _ = nd.ShapeElements(p.OutShape[1:])
	return s
}

// outerProduct is the dense kernel of factors, in C order.
func outerProduct(factors [][]float64) []float64 {
	dense := []float64{1}
	for _, f := range factors {
		next := make([]float64, 0, len(dense)*len(f))
		for _, a := range dense {
			for _, b := range f {
				next = append(next, a*b)
			}
		}
		dense = next
	}
	return dense
}

// minStreamPlanes is the fewest output planes a chunk of the stream
// computes (where the output has them) under a budget of haloRowsBudget or
// more: the planes its halo moves to the front of the next chunk's input
// are then at most K0 − 1 per this many output planes (256×1024×1024
// float32, K0 = 13: 8 planes a chunk, 176 MiB in all).
const minStreamPlanes = 8

// chunks cuts the pass across planes into chunks of whole planes within
// budget, counting a chunk's planes (input, halo included), the planes
// the passes compute for it and two outputs (the writer holds one). It
// returns nil where a plane does not fit, or the output has no plane.
func (s *separableStream) chunks(budget int64) []chunk.Chunk {
	p := s.across
	accSize, outSize := int64(s.acc.Size()), int64(p.Out.Size())
	bytes := func(r int) int64 {
		return int64(r+p.KShape[0]-1)*int64(s.planeAcc)*accSize + int64(r)*int64(s.planeAcc)*accSize + 2*int64(r)*int64(s.planeOut)*outSize
	}
	n := p.OutShape[0]
	if n == 0 || s.planeOut == 0 || s.planeIn == 0 {
		return nil
	}
	r := 1
	for r < n && bytes(r+1) <= budget {
		r++
	}
	if budget >= haloRowsBudget { // smaller budgets: tests of chunk boundaries
		r = max(r, min(minStreamPlanes, n))
	}
	cs, err := chunk.Split(p, chunk.Budget{OutElems: r * s.planeOut})
	if err != nil {
		return nil
	}
	for _, c := range cs {
		for d := 1; d < len(c.Rows); d++ {
			if c.Rows[d] != nil {
				return nil
			}
		}
	}
	return cs
}

// run computes the chunks in order from src, handing each output to w.
// opt is the plan's options with its device and method.
func (s *separableStream) run(ctx context.Context, cs []chunk.Chunk, src nd.Array, opt plan.Options, progress nd.Progress, w *chunkWriter) error {
	// The plans of the passes within planes, per number of planes, and of
	// the pass across them, per chunk geometry.
	planesExec := map[int]*plan.Executable{}
	var acrossExec *plan.Executable
	defer func() {
		for _, e := range planesExec {
			e.Close()
		}
		if acrossExec != nil {
			acrossExec.Close()
		}
	}()
	computePlanes := func(ctx context.Context, dst nd.Array, first, n int) error {
		e := planesExec[n]
		if e == nil {
			q := *s.planes
			q.InShape, q.OutShape = slices.Clone(q.InShape), slices.Clone(q.OutShape)
			q.InShape[0], q.OutShape[0] = n, n
			var err error
			if e, err = plan.New(&q, opt); err != nil {
				return err
			}
			if len(planesExec) >= 4 { // edge lengths: keep a few
				for k, old := range planesExec {
					old.Close()
					delete(planesExec, k)
				}
			}
			planesExec[n] = e
		}
		in := nd.Array{Shape: e.Problem.InShape, Data: nd.SliceData(src.Data, first*s.planeIn, (first+n)*s.planeIn)}
		if testHookPlanes != nil {
			testHookPlanes(n)
		}
		return e.Execute(ctx, dst, in)
	}

	most := 0
	for _, c := range cs {
		most = max(most, c.InElems)
	}
	buf, err := nd.New(s.acc, most)
	if err != nil {
		return err
	}
	plane := s.planeAcc * s.acc.Size()
	raw := buf.Bytes()
	planeAt := func(i int) []byte { return raw[i*plane : (i+1)*plane] }
	var prev []int // the input plane at each position of buf, from the last chunk
	var outs [2]nd.Array
	turn := 0
	for ci := range cs {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := &cs[ci]
		rows := planeRows(c, s.across.InShape[0])
		// Fill buf's positions in order. A plane moves only towards the
		// front (from a position at or after its new one), so no plane is
		// overwritten before it has moved.
		cur := make(map[int]int, len(rows)) // plane → a position filled
		last := make(map[int]int, len(prev))
		for q, r := range prev {
			last[r] = q
		}
		for i := 0; i < len(rows); {
			r := rows[i]
			if q, ok := cur[r]; ok {
				copy(planeAt(i), planeAt(q))
				i++
				continue
			}
			if q, ok := last[r]; ok && q >= i {
				if q != i {
					copy(planeAt(i), planeAt(q))
				}
				cur[r] = i
				i++
				continue
			}
			// A run of consecutive planes not at hand, computed at once.
			n := 1
			for i+n < len(rows) && rows[i+n] == r+n {
				if _, ok := cur[r+n]; ok {
					break
				}
				if q, ok := last[r+n]; ok && q >= i+n {
					break
				}
				n++
			}
			dst := nd.Array{Shape: append([]int{n}, s.across.InShape[1:]...), Data: nd.SliceData(buf.Data, i*s.planeAcc, (i+n)*s.planeAcc)}
			if err := computePlanes(ctx, dst, r, n); err != nil {
				return err
			}
			for k := range n {
				cur[r+k] = i + k
			}
			i += n
		}
		prev = rows

		if acrossExec == nil || !chunk.SameGeometry(acrossExec.Problem, c.Problem) {
			if acrossExec != nil {
				acrossExec.Close()
				acrossExec = nil
			}
			if acrossExec, err = plan.New(c.Problem, opt); err != nil {
				return err
			}
		}
		out, err := reuse(&outs[turn], s.across.Out, c.Problem.FullShape())
		if err != nil {
			return err
		}
		turn = 1 - turn
		in := nd.Array{Shape: c.Problem.InShape, Data: nd.SliceData(buf.Data, 0, c.InElems)}
		if err := acrossExec.Execute(ctx, out, in); err != nil {
			return err
		}
		if err := w.hand(c.OutOffset, out); err != nil {
			return err
		}
		if progress != nil {
			progress.Report(int64(ci+1), int64(len(cs)))
		}
	}
	return nil
}

// testHookPlanes, when set (by tests), is told how many planes each run
// of the passes within planes computes.
var testHookPlanes func(n int)

// planeRows lists the input planes (rows along axis 0) a chunk reads, in
// order.
func planeRows(c *chunk.Chunk, n int) []int {
	if c.Rows[0] == nil {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	var rows []int
	for _, r := range c.Rows[0] {
		for i := range r.N {
			rows = append(rows, r.First+i)
		}
	}
	return rows
}
