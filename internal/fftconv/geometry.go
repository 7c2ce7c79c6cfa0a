package fftconv

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ndconv/ndconv/internal/fft"
	"github.com/ndconv/ndconv/nd"
)

// Geometry is the overlap-save block decomposition of one problem.
type Geometry struct {
	Axes   []int // the input axes transformed (kernel extent > 1), in order
	Batch  []int // every other input axis: each index is its own block
	Kernel []int // kernel extent per transformed axis
	Length []int // transform length per transformed axis (the last even)
	Block  []int // outputs per block per transformed axis: Length − Kernel + 1
	Blocks []int // blocks per transformed axis: ⌈output extent / Block⌉
	// Group is the number of consecutive blocks transformed together, as
	// one batch: short 1-D blocks fill the transforms' row groups.
	Group int
	// BatchShape is the output extent along each Batch axis.
	BatchShape []int
	shift, out []int // per transformed axis
	budget     int64
	workers    int
}

// DefaultBudget is the memory, in bytes, that the blocks' working buffers
// and the kernel spectra may take when the caller states none.
const DefaultBudget = 256 << 20

// Options bound the decomposition.
type Options struct {
	// Budget is the memory, in bytes, for the block buffers of every
	// worker and the kernel spectra together (0: DefaultBudget). The
	// decomposition must fit it with one worker; Concurrency says how
	// many fit.
	Budget int64
	// Workers is the number of blocks the caller would keep in flight at
	// once; it does not change the decomposition (so neither the
	// rounding of the results), only what Concurrency allows.
	Workers int
	// Lengths, when set, forces the transform length per transformed
	// axis instead of the cost model's choice (for tuning and tests).
	Lengths []int
	// PowersOfTwo limits the lengths to powers of two, and MaxLength
	// (when positive) to at most it along any axis whose kernel a shorter
	// one holds; Cost, when set, replaces the CPU engine's cost model in
	// choosing among them: a GPU library's transforms (kernels.FFTGeometry).
	PowersOfTwo bool
	MaxLength   int
	Cost        func(g *Geometry, bank int) float64
}

// Supported reports whether p can run by FFT convolution, and why not: a
// float32 FFT cannot meet the rounding of float64 (Wide) problems, and a
// kernel of a single tap has no axis to transform.
func Supported(p *nd.Problem) error {
	if p.Wide {
		return fmt.Errorf("the float32 FFT cannot keep a float64 problem's precision (%v input, %v output)", p.In, p.Out)
	}
	for _, k := range p.KShape {
		if k > 1 {
			return nil
		}
	}
	return fmt.Errorf("a one-tap kernel has no axis to transform")
}

// New decomposes p, choosing block lengths by Cost within the budget.
func New(p *nd.Problem, opt Options) (*Geometry, error) {
	if err := Supported(p); err != nil {
		return nil, err
	}
	budget := opt.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	g := &Geometry{budget: budget, workers: max(1, opt.Workers)}
	for a, k := range p.KShape {
		if k > 1 {
			g.Axes = append(g.Axes, a)
			g.Kernel = append(g.Kernel, k)
			g.shift = append(g.shift, p.Shift[a])
			g.out = append(g.out, p.OutShape[a])
		} else {
			g.Batch = append(g.Batch, a)
			g.BatchShape = append(g.BatchShape, p.OutShape[a])
		}
	}
	cands := make([][]int, len(g.Axes))
	for i, k := range g.Kernel {
		cands[i] = candidates(k, g.out[i], len(g.Axes), i == len(g.Axes)-1, opt)
	}
	thin(cands)
	var best *Geometry
	bestCost := math.Inf(1)
	length := make([]int, len(g.Axes))
	var search func(i int)
	search = func(i int) {
		if i < len(g.Axes) {
			for _, l := range cands[i] {
				length[i] = l
				search(i + 1)
			}
			return
		}
		c := g.with(length, len(p.Kernels))
		if c.memory(1, len(p.Kernels)) > budget {
			return
		}
		cost := c.cost(len(p.Kernels))
		if opt.Cost != nil {
			cost = opt.Cost(c, len(p.Kernels))
		}
		// Of equal costs, the most blocks: more transforms to run at
		// once (cuFFT ran 2048² 30×30 in 25 blocks of 512² in 0.34 ms,
		// in 100 of 256² in 0.13; session 38).
		if cost < bestCost || cost == bestCost && c.TotalBlocks() > best.TotalBlocks() {
			best, bestCost = c, cost
		}
	}
	if opt.Lengths != nil {
		if len(opt.Lengths) != len(g.Axes) {
			return nil, fmt.Errorf("%d forced lengths for %d transformed axes", len(opt.Lengths), len(g.Axes))
		}
		for i, l := range opt.Lengths {
			if l < g.Kernel[i] || i == len(g.Axes)-1 && l%2 != 0 {
				return nil, fmt.Errorf("forced length %d on an axis of kernel extent %d", l, g.Kernel[i])
			}
		}
		cands = make([][]int, len(g.Axes))
		for i, l := range opt.Lengths {
			cands[i] = []int{l}
		}
	}
	search(0)
	if best == nil {
		smallest := g.with(firsts(cands), len(p.Kernels))
		return nil, fmt.Errorf("FFT blocks need at least %d MiB, more than the budget of %d MiB", smallest.memory(1, len(p.Kernels))>>20, budget>>20)
	}
	return best, nil
}

func firsts(c [][]int) []int {
	out := make([]int, len(c))
	for i, s := range c {
		out[i] = s[0]
	}
	return out
}

// candidates are the transform lengths tried along an axis of kernel
// extent k and output extent n: 2^a·m for the odd m of oddFactors(axes)
// (lengths whose passes are all fast radices; m = 1 alone with
// opt.PowersOfTwo) from k up, and the one such length that holds the
// whole axis; none above opt.MaxLength but the shortest.
func candidates(k, n, axes int, even bool, opt Options) []int {
	next := fft.NextFast
	if even {
		next = fft.NextFastEven
	}
	odd := oddFactors(axes)
	whole := next(max(n+k-1, k))
	if opt.PowersOfTwo {
		odd = odd[:1]
		whole = 1 << bits.Len(uint(max(n+k-1, k)-1))
	}
	var out []int
	for _, m := range odd {
		for l := m; l < whole; l *= 2 {
			if l >= k && (!even || l%2 == 0) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	out = append(slices.Compact(out), whole)
	if opt.MaxLength > 0 {
		short := slices.DeleteFunc(slices.Clone(out[1:]), func(l int) bool { return l > opt.MaxLength })
		out = append(out[:1], short...)
	}
	return out
}

// maxDecompositions bounds the search: a few milliseconds of planning.
const maxDecompositions = 10000

// thin drops every other candidate (keeping the whole-axis length) of the
// longest lists until the search is within maxDecompositions.
func thin(cands [][]int) {
	for {
		total, longest := 1, 0
		for i, c := range cands {
			total *= len(c)
			if len(c) > len(cands[longest]) {
				longest = i
			}
		}
		if total <= maxDecompositions || len(cands[longest]) <= 2 {
			return
		}
		c := cands[longest]
		var kept []int
		for j := 0; j < len(c)-1; j += 2 {
			kept = append(kept, c[j])
		}
		cands[longest] = append(kept, c[len(c)-1])
	}
}

// oddFactors are the odd parts of the candidate lengths: fewer the more
// axes are searched together, so that the search stays within a few
// thousand decompositions.
func oddFactors(axes int) []int {
	switch {
	case axes <= 2:
		return []int{1, 3, 5, 9, 15, 25, 27, 45}
	case axes == 3:
		return []int{1, 3, 5}
	}
	return []int{1, 3}
}

// with returns g with the given transform lengths and what follows.
func (g *Geometry) with(length []int, bank int) *Geometry {
	c := *g
	c.Length = append([]int(nil), length...)
	c.Block, c.Blocks = make([]int, len(length)), make([]int, len(length))
	for i, l := range length {
		c.Block[i] = l - g.Kernel[i] + 1
		c.Blocks[i] = ceilDiv(g.out[i], c.Block[i])
	}
	lines := c.Size() / length[len(length)-1]
	c.Group = max(1, min(16/lines, c.TotalBlocks()))
	return &c
}

// Size is the number of real values of one block: Π Length.
func (g *Geometry) Size() int { return product(g.Length) }

// SpectrumSize is the number of complex values of one block's spectrum.
func (g *Geometry) SpectrumSize() int {
	last := g.Length[len(g.Length)-1]
	return g.Size() / last * (last/2 + 1)
}

// TotalBlocks is the number of blocks: every batch index times Π Blocks.
func (g *Geometry) TotalBlocks() int { return product(g.BatchShape) * product(g.Blocks) }

// Groups is the number of block groups, the unit of work.
func (g *Geometry) Groups() int { return ceilDiv(g.TotalBlocks(), g.Group) }

// Costs are estimated in nanoseconds on one core and converted to the
// multiply-adds DirectCost and SeparableCost count (plan's units) at the
// direct method's rate: with the SIMD loops (both the direct method's and
// the FFT's run vectorised on CPUs with AVX2 and FMA) it does 68–81 per
// nanosecond of CPU time on 2048² images with 15×15 to 47×47 kernels, on
// the development machine; the pure-Go loops about 3. Gathering a value
// by the border rule, multiplying two spectra's values and storing an
// output cost gatherNanos, productNanos and storeNanos: with fft.Nanos
// they predict the measured CPU time of 2048² 15×15 and 31×31 and of the
// 1-D 2²⁴-sample, 1023-tap convolution within 20 %.
const (
	vectorMaddsPerNano = 75
	goMaddsPerNano     = 3
	gatherNanos        = 1.5
	productNanos       = 1.0
	storeNanos         = 1.5
	// Blocks larger than cacheBlock values no longer keep their passes in
	// a core's L2 cache: measured, their transforms take cachePenalty
	// times longer.
	cacheBlock   = 1 << 18
	cachePenalty = 1.5
)

// cost estimates the work of the whole problem: every block transformed
// forward once and back once per kernel.
func (g *Geometry) cost(bank int) float64 {
	p := float64(g.Size())
	transform := fft.Nanos(g.Length)
	if p > cacheBlock {
		transform *= cachePenalty
	}
	perBlock := gatherNanos*p + transform + float64(bank)*(transform+productNanos*float64(g.SpectrumSize())+storeNanos*float64(product(g.Block)))
	rate := float64(goMaddsPerNano)
	if fft.Vectorised() {
		rate = vectorMaddsPerNano
	}
	return rate * perBlock * float64(g.TotalBlocks())
}

// Cost is the estimate of the chosen decomposition, for the planner.
func (g *Geometry) Cost(bank int) float64 { return g.cost(bank) }

// memory is the bytes of block buffers for the given number of workers
// (per worker and block of the group: the real block, its spectrum, a
// product spectrum and the inverse output) plus the kernel spectra.
func (g *Geometry) memory(workers, bank int) int64 {
	p, s := int64(g.Size()), int64(g.SpectrumSize())
	perWorker := int64(g.Group) * (4*p + 8*s + 8*s + 4*p)
	return int64(workers)*perWorker + int64(bank)*8*s
}

// Memory is the bytes the decomposition needs with the given workers.
func (g *Geometry) Memory(workers, bank int) int64 { return g.memory(workers, bank) }

// Concurrency is how many blocks may be in flight at once: the Workers
// asked for, fewer where the budget holds fewer (at least one).
func (g *Geometry) Concurrency(bank int) int {
	w := g.workers
	for w > 1 && g.memory(w, bank) > g.budget {
		w--
	}
	return w
}

// Region is one block: where its outputs are and where its extended
// input starts.
type Region struct {
	// Batch is the index along every Batch axis.
	Batch []int
	// OutStart and OutCount are the block's outputs along each
	// transformed axis; InStart = OutStart − Shift is the extended input
	// position of the block's first value (it may lie outside the input,
	// where the border rule supplies the values). InCount = OutCount +
	// Kernel − 1 values are read; the rest of Length is zero.
	OutStart, OutCount, InStart, InCount []int
}

// Region returns block b (0 ≤ b < TotalBlocks) into r, reusing its
// slices; blocks are numbered with the batch index slowest and the last
// transformed axis fastest.
func (g *Geometry) Region(b int, r *Region) {
	n := len(g.Axes)
	r.Batch = resize(r.Batch, len(g.Batch))
	r.OutStart, r.OutCount = resize(r.OutStart, n), resize(r.OutCount, n)
	r.InStart, r.InCount = resize(r.InStart, n), resize(r.InCount, n)
	for i := n - 1; i >= 0; i-- {
		at := b % g.Blocks[i]
		b /= g.Blocks[i]
		r.OutStart[i] = at * g.Block[i]
		r.OutCount[i] = min(g.Block[i], g.out[i]-r.OutStart[i])
		r.InStart[i] = r.OutStart[i] - g.shift[i]
		r.InCount[i] = r.OutCount[i] + g.Kernel[i] - 1
	}
	for i := len(g.Batch) - 1; i >= 0; i-- {
		r.Batch[i] = b % g.BatchShape[i]
		b /= g.BatchShape[i]
	}
}

// KernelBlock places kernel weights w (C order over the problem's KShape,
// whose batch axes have extent 1) at the origin of a zero block of Size
// values, in float64: the sequence whose spectrum multiplies every block.
func (g *Geometry) KernelBlock(w []float64) []float64 {
	out := make([]float64, g.Size())
	strides := nd.Strides(g.Length)
	idx := make([]int, len(g.Kernel))
	for _, v := range w {
		off := 0
		for i, x := range idx {
			off += x * strides[i]
		}
		out[off] = v
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < g.Kernel[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// ErrorBound is the largest difference from the exact result that FFT
// convolution with this decomposition may show, for kernel weights whose
// absolute values sum to absSum and an extended input (input and cval)
// of largest magnitude maxAbs: boundConstant·ε·(log₂P + 1)·Σ|w|·max|x̃|
// with ε = 2⁻²⁴ and P the block size. A float32 output adds its own
// rounding of the result.
func (g *Geometry) ErrorBound(absSum, maxAbs float64) float64 {
	return boundConstant * 0x1p-24 * (math.Log2(float64(g.Size())) + 1) * absSum * maxAbs
}

// boundConstant is the margin of the error bound over the largest error
// measured on the tests' random problems (about a quarter of the bound).
const boundConstant = 2

func resize(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
