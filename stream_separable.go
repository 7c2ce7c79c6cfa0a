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

// separableStream is the two problems of a streamed separable kernel, one
// pair per kernel of a bank.
type separableStream struct {
	planes, across []*nd.Problem // per kernel
	acc            nd.DType      // the accumulator type: the planes' dtype
	planeIn        int           // elements of one input plane
	planeAcc       int           // elements of one intermediate plane
	planeOut       int           // elements of one output plane, without the bank
}

// newSeparableStream returns the split of p, or nil where it does not
// apply: not the CPU's separable method, complex or float16 data, or a
// kernel that does not span axis 0 and another axis (chunks along axis 0
// then repeat no pass).
func newSeparableStream(p *nd.Problem, exec *plan.Executable) *separableStream {
	if exec.Device.GPU() || exec.Method != plan.Separable || !p.Separable() ||
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
	s := &separableStream{acc: nd.Float32}
	if p.Wide {
		s.acc = nd.Float64
	}
	one := []float64{1}
	for _, k := range p.Kernels {
		f := k.Factors
		planes := *p
		planes.Out, planes.Bank = s.acc, false
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
		across.In, across.Bank = s.acc, false
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
		s.planes, s.across = append(s.planes, &planes), append(s.across, &across)
	}
	s.planeIn, _ = nd.ShapeElements(p.InShape[1:])
	s.planeAcc, _ = nd.ShapeElements(s.across[0].InShape[1:])
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
// more, divided among a bank's kernels (2 at least): the planes its halo
// moves to the front of the next chunk's input are then at most K0 − 1
// per this many output planes (256×1024×1024 float32, K0 = 13: 8 planes a
// chunk, 176 MiB in all; a bank of 3, 2 planes a chunk).
const minStreamPlanes = 8

// chunks cuts the pass across planes into chunks of rows output planes,
// or (rows = 0) of whole planes within budget, counting per kernel a
// chunk's planes (input, halo included) and the planes the passes compute
// for it, and two outputs (the writer holds one). It returns nil where
// the output has no plane.
func (s *separableStream) chunks(budget int64, rows int) []chunk.Chunk {
	p := s.across[0]
	k := int64(len(s.across))
	accSize, outSize := int64(s.acc.Size()), int64(p.Out.Size())
	bytes := func(r int) int64 {
		return k*int64(2*r+p.KShape[0]-1)*int64(s.planeAcc)*accSize + (k+2)*int64(r)*int64(s.planeOut)*outSize
	}
	n := p.OutShape[0]
	if n == 0 || s.planeOut == 0 || s.planeIn == 0 {
		return nil
	}
	r := rows
	if r <= 0 {
		r = 1
		for r < n && bytes(r+1) <= budget {
			r++
		}
		if budget >= haloRowsBudget { // smaller budgets: tests of chunk boundaries
			r = max(r, min(max(minStreamPlanes/len(s.across), 2), n))
		}
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

// start returns the stream of chunks cs over src; opt is the plan's
// options with its device and method.
func (s *separableStream) start(cs []chunk.Chunk, src nd.Array, opt plan.Options) (chunkStream, error) {
	most := 0
	for _, c := range cs {
		most = max(most, c.InElems)
	}
	ps := &planeStream{s: s, chunks: cs, src: src, opt: opt, kernels: make([]planeKernel, len(s.across))}
	for k := range ps.kernels {
		buf, err := nd.New(s.acc, most)
		if err != nil {
			return nil, err
		}
		ps.kernels[k] = planeKernel{buf: buf, planes: map[int]*plan.Executable{}}
	}
	return ps, nil
}

// planeStream is a separableStream running: per kernel, the buffer of the
// current chunk's planes and the plans of both problems.
type planeStream struct {
	s       *separableStream
	chunks  []chunk.Chunk
	i       int
	src     nd.Array
	opt     plan.Options
	kernels []planeKernel
	prev    []int       // the input plane at each position of the buffers, from the last chunk
	outs    [2]nd.Array // the output buffers, taking turns
	turn    int
	one     nd.Array // a bank's one kernel's output, before it is interleaved
}

type planeKernel struct {
	buf    nd.Array
	planes map[int]*plan.Executable // the passes within planes, per number of planes
	across *plan.Executable         // the pass across them, for the last chunk's geometry
}

func (ps *planeStream) len() int { return len(ps.chunks) }

func (ps *planeStream) close() {
	for _, pk := range ps.kernels {
		for _, e := range pk.planes {
			e.Close()
		}
		if pk.across != nil {
			pk.across.Close()
		}
	}
}

// computePlanes runs kernel k's passes within planes on n input planes
// from first into dst.
func (ps *planeStream) computePlanes(ctx context.Context, k int, dst nd.Array, first, n int) error {
	pk := &ps.kernels[k]
	e := pk.planes[n]
	if e == nil {
		q := *ps.s.planes[k]
		q.InShape, q.OutShape = slices.Clone(q.InShape), slices.Clone(q.OutShape)
		q.InShape[0], q.OutShape[0] = n, n
		var err error
		if e, err = plan.New(&q, ps.opt); err != nil {
			return err
		}
		if len(pk.planes) >= 4 { // edge lengths: keep a few
			for m, old := range pk.planes {
				old.Close()
				delete(pk.planes, m)
			}
		}
		pk.planes[n] = e
	}
	in := nd.Array{Shape: e.Problem.InShape, Data: nd.SliceData(ps.src.Data, first*ps.s.planeIn, (first+n)*ps.s.planeIn)}
	if testHookPlanes != nil {
		testHookPlanes(n)
	}
	return e.Execute(ctx, dst, in)
}

func (ps *planeStream) next(ctx context.Context) (int, nd.Array, error) {
	s := ps.s
	c := &ps.chunks[ps.i]
	ps.i++
	rows := planeRows(c, s.across[0].InShape[0])
	plane := s.planeAcc * s.acc.Size()
	// Fill the buffers' positions in order. A plane moves only towards
	// the front (from a position at or after its new one), so no plane is
	// overwritten before it has moved.
	cur := make(map[int]int, len(rows)) // plane → a position filled
	last := make(map[int]int, len(ps.prev))
	for q, r := range ps.prev {
		last[r] = q
	}
	move := func(to, from int) {
		for _, pk := range ps.kernels {
			raw := pk.buf.Bytes()
			copy(raw[to*plane:(to+1)*plane], raw[from*plane:(from+1)*plane])
		}
	}
	for i := 0; i < len(rows); {
		r := rows[i]
		if q, ok := cur[r]; ok {
			move(i, q)
			i++
			continue
		}
		if q, ok := last[r]; ok && q >= i {
			if q != i {
				move(i, q)
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
		for k, pk := range ps.kernels {
			dst := nd.Array{Shape: append([]int{n}, s.across[0].InShape[1:]...), Data: nd.SliceData(pk.buf.Data, i*s.planeAcc, (i+n)*s.planeAcc)}
			if err := ps.computePlanes(ctx, k, dst, r, n); err != nil {
				return 0, nd.Array{}, err
			}
		}
		for j := range n {
			cur[r+j] = i + j
		}
		i += n
	}
	ps.prev = rows

	bank := len(ps.kernels)
	full := c.Problem.OutShape
	if bank > 1 {
		full = append(slices.Clone(full), bank)
	}
	out, err := reuse(&ps.outs[ps.turn], c.Problem.Out, full)
	if err != nil {
		return 0, nd.Array{}, err
	}
	ps.turn = 1 - ps.turn
	for k := range ps.kernels {
		pk := &ps.kernels[k]
		q := *c.Problem
		q.Kernels, q.CVal = s.across[k].Kernels, s.across[k].CVal
		if pk.across == nil || !chunk.SameGeometry(pk.across.Problem, &q) {
			if pk.across != nil {
				pk.across.Close()
				pk.across = nil
			}
			if pk.across, err = plan.New(&q, ps.opt); err != nil {
				return 0, nd.Array{}, err
			}
		}
		in := nd.Array{Shape: q.InShape, Data: nd.SliceData(pk.buf.Data, 0, c.InElems)}
		dst := out
		if bank > 1 {
			if dst, err = reuse(&ps.one, q.Out, q.OutShape); err != nil {
				return 0, nd.Array{}, err
			}
		}
		if err := pk.across.Execute(ctx, dst, in); err != nil {
			return 0, nd.Array{}, err
		}
		if bank > 1 {
			interleave(out.Bytes(), dst.Bytes(), k, bank, q.Out.Size())
		}
	}
	return c.OutOffset * bank, out, nil
}

// interleave puts src's elements (of size bytes) at dst's elements k,
// k + n, k + 2n, …: kernel k's output into a bank's.
func interleave(dst, src []byte, k, n, size int) {
	for i, j := 0, k*size; i < len(src); i, j = i+size, j+n*size {
		copy(dst[j:j+size], src[i:i+size])
	}
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
