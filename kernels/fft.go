package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndconv/ndconv/internal/fft"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/nd"
)

// FFTConvOptions are what NewFFTConv plans within.
type FFTConvOptions struct {
	// Budget is the device memory, in bytes, for a batch's block buffers
	// and the kernel spectra (0: fftconv.DefaultBudget).
	Budget int64
	// RealBlocks: the backend transforms real blocks with a library
	// (cuFFT's real-to-complex and complex-to-real, spectra of
	// fftconv.Geometry.SpectrumSize values); otherwise blocks are complex,
	// two real ones in each, and fft.cl transforms them (Transforms) —
	// or, with Library, the backend's complex-to-complex transforms.
	RealBlocks bool
	// Library: a library transforms the blocks (RealBlocks, or complex
	// ones), so neither fft.cl's transforms nor their scratch buffer are
	// planned.
	Library bool
	// MaxLocalBytes is the local memory fft_local may declare for a line
	// (two buffers of its length); 0 runs every transform by fft_pass.
	MaxLocalBytes int
	// MaxBatch, when positive, caps the blocks per batch (tests).
	MaxBatch int
	// Lengths forces the transform lengths (a tuning's FFTShape); nil
	// takes internal/fftconv's choice.
	Lengths []int
	// Index64 computes every index in 64 bits even where 32 would do
	// (tests of the 64-bit kernels on small problems).
	Index64 bool
}

// FFTConv is FFT convolution of one problem as GPU work, for a backend to
// run batch by batch: for each batch of Batch blocks (from block
// first = i·Batch on, the last batch holding the rest) fftconv_gather
// fills the block buffer, the forward transform (Transforms, or the
// library's) makes their spectra; then for each group of Group kernels of
// the bank (the last holding the rest) fftconv_multiply takes the
// products with the group's spectra, one plane of Slots(Batch) slots a
// kernel, one inverse transform of Group planes brings them back, and
// fftconv_scatter stores the group's valid outputs. The kernels' spectra
// are made once, before: each kernel's block (Kernels) goes through the
// same forward transform, then fftconv_kernel_spectrum.
type FFTConv struct {
	Geometry *fftconv.Geometry
	// Batch is the blocks transformed together; Batches how many batches
	// cover the blocks; Group the kernels whose products are inverted
	// and stored together.
	Batch, Batches, Group int
	// PerSlot is the blocks one transform carries: 1 for real blocks, 2
	// for complex ones (one in the real parts, one in the imaginary).
	PerSlot int
	// BlockValues are the values of one block (Π Length: real or
	// complex); SpectrumValues the complex values of its spectrum
	// (fewer for real blocks); Outputs a whole block's outputs (Π Block).
	BlockValues, SpectrumValues, Outputs int
	// Defines specialise fftconv.cl; Geo is its geo argument.
	Defines []string
	Geo     []int64
	// CVal is the value outside the input with the constant border.
	CVal float32
	// Kernels are each bank kernel's block: its weights at the origin of
	// a zero block, as float32.
	Kernels [][]float32
	// Transforms are fft.cl's transforms of a batch (complex blocks
	// only), one per transformed axis, last axis first.
	Transforms []FFTTransform
}

// FFTTransform is one batched 1-D transform of fft.cl: Lines lines of
// Length values Stride apart (a whole batch's lines along one axis), by
// fft_local where Local (whole lines in local memory; LocalDefines
// specialise it) or else by Passes of fft_pass, ping-ponging with a
// scratch buffer.
type FFTTransform struct {
	Length, Stride, Lines int
	Local                 bool
	LocalDefines          []string
	LocalSize             int // fft_local's work-group size
	Passes                []FFTPass
}

// FFTPass is one Stockham pass: sub-transforms of length P done, Radix
// next.
type FFTPass struct{ P, Radix int }

// FFTStep is one launch of fft.cl's transforms over a batch, in place in
// the data buffer: fft_local of transform Transform (its build,
// LocalDefines) on Lines lines, Groups work-groups of LocalSize; or one
// fft_pass of it over Lines lines, Items work-items by GridGroups,
// reading the data and writing the scratch buffer or (FromScratch) the
// reverse; or (CopyBack) a copy of Bytes from the scratch buffer into the
// data, after an odd count of passes.
type FFTStep struct {
	Transform   int
	Local       bool
	LocalSize   int
	Groups      int
	Pass        FFTPass
	Items       int64
	FromScratch bool
	CopyBack    bool
	Lines       int64
	Bytes       int
}

// TransformSteps are the launches that transform slots complex blocks
// of a batch in place, forward or inverse alike (an argument of the
// kernels): every backend running fft.cl launches these, in order.
func (f *FFTConv) TransformSteps(slots int) []FFTStep {
	var steps []FFTStep
	for i, t := range f.Transforms {
		lines := int64(slots * f.BlockValues / t.Length)
		if t.Local {
			steps = append(steps, FFTStep{Transform: i, Local: true, LocalSize: t.LocalSize, Groups: int(min(lines, 1<<16)), Lines: lines})
			continue
		}
		fromScratch := false
		for _, pass := range t.Passes {
			steps = append(steps, FFTStep{Transform: i, Pass: pass, Items: lines * int64(t.Length/pass.Radix), FromScratch: fromScratch, Lines: lines})
			fromScratch = !fromScratch
		}
		if fromScratch {
			steps = append(steps, FFTStep{Transform: i, CopyBack: true, Bytes: slots * f.BlockValues * 8})
		}
	}
	return steps
}

// FFTRadices are the radices of fft.cl's passes in the order it takes
// them (fft_radix): what remains of the length chooses the next.
func FFTRadices(n int) ([]FFTPass, error) {
	var passes []FFTPass
	for p := 1; p < n; {
		m := n / p
		r := 0
		for _, c := range []int{4, 2, 3, 5, 7} {
			if m%c == 0 {
				r = c
				break
			}
		}
		if r == 0 {
			return nil, fmt.Errorf("kernels: fft.cl transforms lengths 2^a·3^b·5^c·7^d, not %d", n)
		}
		passes = append(passes, FFTPass{P: p, Radix: r})
		p *= r
	}
	return passes, nil
}

// FFTRoots is the twiddle table of fft.cl for length n: e^(−2πi·m/n) as
// interleaved float32 (real, imaginary) pairs.
func FFTRoots(n int) []float32 {
	roots := fft.Roots(n)
	out := make([]float32, 2*n)
	for i, v := range roots {
		out[2*i], out[2*i+1] = real(v), imag(v)
	}
	return out
}

// libraryMaxLength is the longest transform along an axis a GPU library
// is given where a shorter one holds the kernel: cuFFT on the H100 ran a
// 1-D C2C of 8192 in one kernel and longer ones slower per value (the
// 1023-tap convolution 4.63 ms in blocks of 8192, 4.91 of 16384, 6.25 of
// 32768; docs/perf/fft.md, v5).
const libraryMaxLength = 8192

// FFTGeometry is the decomposition of p a GPU's FFT convolution runs:
// with lengths, those. Where fft.cl transforms the blocks, the CPU
// engine's cost model's choice (the one plan.FFTCost estimates); where a
// library does, powers of two of at most libraryMaxLength, by
// libraryCost. cuFFT ran those faster than the CPU model's lengths (whose
// transforms take every length of fast radices alike) and than every
// fast length weighted by its odd factors: 2048² 29×29 0.106 ms against
// 0.129, 512³ 7³ 4.76 against 7.25 and 5.22, 1500² 21×21 0.069 against
// 0.086 and 0.093 (bench/results/2026-11-28-h100-s38, call 4).
func FFTGeometry(p *nd.Problem, library bool, lengths []int) (*fftconv.Geometry, error) {
	opt := fftconv.Options{Workers: 1, Lengths: lengths}
	if library {
		opt.PowersOfTwo, opt.MaxLength, opt.Cost = true, libraryMaxLength, libraryCost
	}
	return fftconv.New(p, opt)
}

// libraryCost is a library's FFT convolution of g on a GPU, up to a
// constant: every stage — the gather, each transform pass (one per axis
// for lengths up to libraryMaxLength), each kernel's product, inverse and
// store — streams the blocks' values through memory, so the cost is the
// values the transforms hold, two blocks a complex transform (the paired
// layout, chooseLayout's default).
func libraryCost(g *fftconv.Geometry, bank int) float64 {
	transforms := (g.TotalBlocks() + 1) / 2
	return float64(transforms) * float64(g.Size())
}

// NewFFTConv plans p's FFT convolution on a GPU: internal/fftconv's
// blocks of FFTGeometry's lengths (the CPU engine's for fft.cl, a
// library's own otherwise), as many per batch and as many kernels per
// group as the budget holds. It returns nil, nil for an empty output.
func NewFFTConv(p *nd.Problem, opt FFTConvOptions) (*FFTConv, error) {
	if err := CheckDTypes(p); err != nil {
		return nil, err
	}
	if slices.Contains(p.OutShape, 0) || slices.Contains(p.InShape, 0) {
		return nil, nil
	}
	// The budget sets only the batches, not the decomposition.
	g, err := FFTGeometry(p, opt.RealBlocks || opt.Library, opt.Lengths)
	if err != nil {
		return nil, err
	}
	budget := opt.Budget
	if budget <= 0 {
		budget = fftconv.DefaultBudget
	}
	f := &FFTConv{Geometry: g, BlockValues: g.Size(), SpectrumValues: g.Size(), PerSlot: 2, CVal: float32(p.CVal)}
	if opt.RealBlocks {
		f.SpectrumValues, f.PerSlot = g.SpectrumSize(), 1
	}
	for _, k := range p.Kernels {
		block := make([]float32, g.Size())
		for i, v := range g.KernelBlock(k.Dense) {
			block[i] = float32(v)
		}
		f.Kernels = append(f.Kernels, block)
	}
	// A group of maxGroup kernels has a whole 64-byte line of float32
	// outputs a voxel to store; a group halves while one slot of a batch
	// does not fit.
	fixed := f.spectraBytes()
	f.Group = min(len(p.Kernels), maxGroup)
	for f.Group > 1 && fixed+f.slotBytes(f.Group) > budget {
		f.Group = (f.Group + 1) / 2
	}
	if fixed+f.slotBytes(f.Group) > budget {
		return nil, fmt.Errorf("kernels: FFT blocks of %v need %d MiB, more than the budget of %d MiB", g.Length, (fixed+f.slotBytes(1))>>20, budget>>20)
	}
	f.Batch = int(min(int64(g.TotalBlocks()), (budget-fixed)/f.slotBytes(f.Group)*int64(f.PerSlot)))
	if opt.MaxBatch > 0 {
		f.Batch = min(f.Batch, opt.MaxBatch)
	}
	// As many batches as that takes, of even sizes: a library's plan
	// transforms a whole batch's slots every time.
	f.Batches = ceilDiv(g.TotalBlocks(), f.Batch)
	f.Batch = ceilDiv(g.TotalBlocks(), f.Batches)

	outputs := 1
	for _, b := range g.Block {
		outputs *= b
	}
	f.Geo = []int64{int64(len(g.Axes)), int64(len(g.Batch)), int64(g.Size()), int64(outputs)}
	outStrides, inStrides := nd.Strides(p.OutShape), nd.Strides(p.InShape)
	for i, a := range g.Axes {
		f.Geo = append(f.Geo, int64(g.Length[i]), int64(g.Block[i]), int64(g.Blocks[i]), int64(p.Shift[a]),
			int64(p.InShape[a]), int64(inStrides[a]), int64(p.OutShape[a]), int64(outStrides[a]))
	}
	for j, a := range g.Batch {
		f.Geo = append(f.Geo, int64(g.BatchShape[j]), int64(inStrides[a]), int64(outStrides[a]))
	}
	f.Outputs = outputs
	f.Defines = append(typeDefines(p), fmt.Sprintf("BORDER=%d", p.Border), fmt.Sprintf("REAL_BLOCKS=%d", b2i(opt.RealBlocks)),
		fmt.Sprintf("IDX32=%d", b2i(!opt.Index64 && f.indexFits(p))),
		fmt.Sprintf("NAXES=%d", len(g.Axes)), fmt.Sprintf("NBATCH=%d", len(g.Batch)), fmt.Sprintf("GROUP=%d", f.Group))
	slices.Sort(f.Defines)

	if opt.RealBlocks || opt.Library {
		return f, nil
	}
	stride := 1
	for i := len(g.Length) - 1; i >= 0; i-- {
		n := g.Length[i]
		passes, err := FFTRadices(n)
		if err != nil {
			return nil, err
		}
		t := FFTTransform{Length: n, Stride: stride, Lines: f.Slots(f.Batch) * g.Size() / n, Passes: passes}
		// Unit stride: a work-group reads and writes whole lines. Its
		// local buffers are sized by the next power of two, so that few
		// builds serve every length.
		if capacity := max(64, nextPow2(n)); stride == 1 && 2*8*capacity <= opt.MaxLocalBytes {
			t.Local = true
			t.LocalDefines = []string{fmt.Sprintf("FFT_LOCAL_MAX=%d", capacity)}
			t.LocalSize = min(256, max(32, (n/4+31)/32*32))
		}
		f.Transforms = append(f.Transforms, t)
		stride *= n
	}
	return f, nil
}

// slotBytes is the device memory one slot of a batch takes with groups of
// group kernels: the gathered blocks and their spectra (one buffer for
// fft.cl, which transforms in place), and per kernel of the group a
// product and its inverse (fft.cl: a scratch buffer as large as the
// product, for fft_pass).
func (f *FFTConv) slotBytes(group int) int64 {
	blockBytes := int64(8)
	if f.PerSlot == 1 {
		blockBytes = 4 // real blocks
	}
	return 8*int64(f.SpectrumValues)*int64(1+group) + int64(group)*int64(f.BlockValues)*blockBytes
}

// spectraBytes is the device memory of the kernels' spectra.
func (f *FFTConv) spectraBytes() int64 {
	return int64(len(f.Kernels)) * int64(f.SpectrumValues) * 8
}

// maxGroup is the most kernels of a bank an FFT convolution inverts and
// stores together.
const maxGroup = 16

// KernelSlot is kernel k's block as the first slot of a batch holds it:
// its real values (RealBlocks), or the real parts of complex values whose
// imaginary parts are zero. Its forward transform is the spectrum
// fftconv_kernel_spectrum turns into the product's factor.
func (f *FFTConv) KernelSlot(k int) []float32 {
	if f.PerSlot == 1 {
		return f.Kernels[k]
	}
	slot := make([]float32, 2*len(f.Kernels[k]))
	for i, v := range f.Kernels[k] {
		slot[2*i] = v
	}
	return slot
}

// indexLimit is the largest index fftconv.cl may compute in an int: a
// grid-stride loop steps past its total by up to GridLocal·maxGridGroups.
const indexLimit = math.MaxInt32 - GridLocal*maxGridGroups

// indexFits reports whether every index fftconv.cl computes fits an int:
// the input's and output's elements (with the bank), the batch's values
// (two floats per complex value, a group's planes of them) and outputs,
// the kernels' spectra, the block numbers.
func (f *FFTConv) indexFits(p *nd.Problem) bool {
	in, out := int64(product(p.InShape)), int64(product(p.OutShape))*int64(len(p.Kernels))
	batch := int64(f.Group) * int64(f.Slots(f.Batch)) * int64(f.BlockValues) * 2
	spectra := int64(len(p.Kernels)) * int64(f.SpectrumValues)
	outputs := int64(f.Batch) * int64(f.Outputs)
	return max(in, out, batch, spectra, outputs, int64(f.Geometry.TotalBlocks())+2) < indexLimit
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// Scratch reports whether a transform runs by fft_pass and so needs a
// scratch buffer as large as the blocks'.
func (f *FFTConv) Scratch() bool {
	for _, t := range f.Transforms {
		if !t.Local {
			return true
		}
	}
	return false
}

// Slots is the transforms that count blocks take.
func (f *FFTConv) Slots(count int) int { return (count + f.PerSlot - 1) / f.PerSlot }

// BatchBlocks is the blocks of batch i: first, count.
func (f *FFTConv) BatchBlocks(i int) (first, count int) {
	first = i * f.Batch
	return first, min(f.Batch, f.Geometry.TotalBlocks()-first)
}

// FFTGrid is a launch of fftconv_gather or fftconv_scatter: Groups
// work-groups of Local work-items (x fastest; a backend's global size is
// their product per dimension).
type FFTGrid struct{ Groups, Local [3]int }

// rowsPerItem is how many rows of a slot a work-item of the gather and
// scatter walks: enough that finding the slot's blocks (divisions by the
// geometry) costs little per value, few enough that the grid fills a GPU.
const rowsPerItem = 8

// maxGridYZ is the most work-groups along y and z on every backend
// (CUDA's limit); the kernels loop where the grid holds fewer.
const maxGridYZ = 65535

// rowChunk is fftconv.cl's CHUNK: the values of a row a work-item loads
// at once.
const rowChunk = 4

// rowGrid spreads slots slots of rows rows, each of width values, over
// work-groups: along x as few work-items (whole warps, at most
// GridLocal) as cover a row in the fewest chunks of rowChunk values each,
// along y the rows that fill the rest of GridLocal, rowsPerItem rows per
// work-item; along z one slot per work-group.
func rowGrid(width, rows, slots int) FFTGrid {
	chunks := ceilDiv(width, GridLocal*rowChunk)
	lx := ceilDiv(ceilDiv(width, chunks*rowChunk), 32) * 32
	ly := max(1, min(GridLocal/lx, rows))
	gy := min(maxGridYZ, ceilDiv(rows, ly*rowsPerItem))
	return FFTGrid{Groups: [3]int{1, gy, min(maxGridYZ, max(1, slots))}, Local: [3]int{lx, ly, 1}}
}

// GatherGrid is the fftconv_gather launch for a batch of count blocks:
// rows along the last transformed axis of Length values.
func (f *FFTConv) GatherGrid(count int) FFTGrid {
	g := f.Geometry
	last := g.Length[len(g.Length)-1]
	return rowGrid(last, f.BlockValues/last, f.Slots(count))
}

// ScatterGrid is the fftconv_scatter launch for a batch of count blocks:
// rows of Block outputs, Group items each.
func (f *FFTConv) ScatterGrid(count int) FFTGrid {
	g := f.Geometry
	last := g.Block[len(g.Block)-1]
	return rowGrid(last*f.Group, f.Outputs/last, f.Slots(count))
}

// GridLocal is the work-group size of the grid-stride kernels
// (fftconv.cl's, fft_pass).
const GridLocal = 256

// maxGridGroups caps their groups: beyond it each work-item loops.
const maxGridGroups = 1 << 16

// GridGroups is the work-groups a grid-stride kernel over total items
// takes.
func GridGroups(total int64) int {
	return int(max(1, min(maxGridGroups, (total+GridLocal-1)/GridLocal)))
}

// FFTCandidates are the transform lengths `ndconv tune` measures for the
// FFT method on p: powers of two along each transformed axis, 2 to 64
// times the kernel's reach (a block's outputs are its length less the
// reach), no longer than the axis's extended extent needs; none for
// kernels spanning more than 4 axes. Untuned, FFTGeometry chooses (for a
// library, among powers of two too: the sweep that led there is in
// docs/perf/fft.md, "v5 measured" and "bank groups").
func FFTCandidates(p *nd.Problem) []Tuning {
	var axes []int
	for d, k := range p.KShape {
		if k > 1 {
			axes = append(axes, d)
		}
	}
	if len(axes) == 0 || len(axes) > len(FFTShape{}.Lengths) {
		return nil
	}
	var out []Tuning
	seen := map[FFTShape]bool{}
	for scale := 2; scale <= 64; scale *= 2 {
		var s FFTShape
		for i, d := range axes {
			reach := p.KShape[d] - 1
			s.Lengths[i] = min(nextPow2(scale*reach), nextPow2(p.InShape[d]+2*reach))
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, Tuning{Shape: s})
		}
	}
	return out
}

// FFTShape fixes the FFT method's transform lengths, one per transformed
// axis (at most 4; zero leaves the choice to internal/fftconv's cost
// model), as FFTW's wisdom fixes a plan.
type FFTShape struct {
	Lengths [4]int
}

// Slice is the forced lengths, or nil where none are.
func (s FFTShape) Slice() []int {
	n := 0
	for n < len(s.Lengths) && s.Lengths[n] > 0 {
		n++
	}
	if n == 0 {
		return nil
	}
	return s.Lengths[:n:n]
}
