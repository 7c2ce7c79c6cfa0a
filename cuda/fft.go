package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// FFTSupported reports whether NewFFT can run p here, and why not: the
// float32 FFT must take the problem (fftconv.Supported) and cuFFT must
// load. Kernels spanning more axes than cuFFT transforms together run
// through fft.cl's transforms (chooseLayout).
func FFTSupported(p *nd.Problem) error {
	if err := fftconv.Supported(p); err != nil {
		return err
	}
	if err := loadCUFFT(); err != nil {
		return fmt.Errorf("FFT unavailable because %w", err)
	}
	return nil
}

// FFTEngine executes one problem by FFT convolution: internal/fftconv's
// blocks, gathered and scattered by kernels/fftconv.cl (through NVRTC),
// transformed by cuFFT's plans (made once per block shape, on the engine's
// stream, work areas from the device's pool: real-to-complex and back, or
// complex-to-complex for two real blocks at once) or by kernels/fft.cl,
// as chooseLayout decides, batch by batch; slab by slab, as the other methods, when
// the input and output do not fit the memory budget. Results differ from
// the direct method by rounding, within fftconv.Geometry.ErrorBound. An
// input holding NaN or Inf, or values so large that a float32 transform
// could overflow (or an infinite cval), runs the direct method, whose bits
// those outputs must carry.
type FFTEngine struct {
	*Engine // the FFT method
	absSum  float64
	g       *fftconv.Geometry // the whole problem's blocks, for Overflows

	mu     sync.Mutex
	direct *Engine // the fallback, made when first needed
}

// NewFFT prepares p for FFT convolution on cuda:opt.Device. Kernels are
// compiled, plans made and spectra computed when first used.
func NewFFT(p *nd.Problem, opt EngineOptions) (*FFTEngine, error) {
	if err := FFTSupported(p); err != nil {
		return nil, fmt.Errorf("cuda: FFT method: %w", err)
	}
	g, err := fftconv.New(p, fftconv.Options{Workers: 1, Lengths: opt.Tuning.FFT.Slice()})
	if err != nil {
		return nil, fmt.Errorf("cuda: FFT method: %w", err)
	}
	e, err := newEngine(p, opt, &fftMethod{states: map[string]*fftState{}})
	if err != nil {
		return nil, err
	}
	return &FFTEngine{Engine: e, absSum: fftconv.AbsSum(p), g: g}, nil
}

// Close releases the engine, its plans and buffers, and the direct
// fallback's.
func (e *FFTEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.direct != nil {
		errs = append(errs, e.direct.Close())
	}
	return errors.Join(append(errs, e.Engine.Close())...)
}

// needsDirect reports whether src must run by the direct method.
func (e *FFTEngine) needsDirect(src nd.Array) bool {
	nonFinite, maxAbs := fftconv.ScanInput(e.p, src, runtime.GOMAXPROCS(0))
	return nonFinite > 0 || e.g.Overflows(e.absSum, maxAbs)
}

func (e *FFTEngine) directEngine() (*Engine, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.direct == nil {
		d, err := NewDirect(e.p, e.opt)
		if err != nil {
			return nil, err
		}
		e.direct = d
	}
	return e.direct, nil
}

// Execute correlates host arrays, by FFT or, for inputs it cannot
// transform, by the direct method.
func (e *FFTEngine) Execute(ctx context.Context, dst, src nd.Array) error {
	if e.needsDirect(src) {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.Execute(ctx, dst, src)
	}
	return e.Engine.Execute(ctx, dst, src)
}

// deviceNeedsDirect checks the arrays and downloads src to look for NaN,
// Inf and overflow.
func (e *FFTEngine) deviceNeedsDirect(dst, src *Array) (bool, error) {
	if err := e.checkArrays(dst, src); err != nil {
		return false, err
	}
	host, err := src.Download()
	if err != nil {
		return false, err
	}
	return e.needsDirect(host), nil
}

// ExecuteDevice correlates device arrays. The input is downloaded once to
// look for NaN, Inf and overflow.
func (e *FFTEngine) ExecuteDevice(ctx context.Context, dst, src *Array) error {
	direct, err := e.deviceNeedsDirect(dst, src)
	if err != nil {
		return err
	}
	if direct {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.ExecuteDevice(ctx, dst, src)
	}
	return e.Engine.ExecuteDevice(ctx, dst, src)
}

// TimeDevice times the method on device arrays (the input's scan for NaN,
// Inf and overflow comes before, untimed).
func (e *FFTEngine) TimeDevice(dst, src *Array, repeats int) ([]float64, error) {
	direct, err := e.deviceNeedsDirect(dst, src)
	if err != nil {
		return nil, err
	}
	if direct {
		d, err := e.directEngine()
		if err != nil {
			return nil, err
		}
		return d.TimeDevice(dst, src, repeats)
	}
	return e.Engine.TimeDevice(dst, src, repeats)
}

// fftBudget bounds the device memory of one block shape's batch buffers
// and kernel spectra, beside the input and output the slabs budget for.
const fftBudget = 1 << 30

// fftMaxBatch, when positive, caps the blocks per batch: the tests' way
// to run partial batches on small problems.
var fftMaxBatch = 0

// maxFFTStates bounds the block shapes whose buffers an engine keeps (the
// whole problem's, or the slabs' few geometries: first, middle, last).
const maxFFTStates = 3

// fftMethod is FFT convolution as the engine's method: per problem (the
// whole, or a slab's), its plan, cuFFT plans, spectra and buffers, made
// once and kept until the engine closes.
type fftMethod struct {
	states map[string]*fftState
}

// fftState is what one problem's FFT convolution keeps on the device.
type fftState struct {
	conv   *kernels.FFTConv
	layout fftLayout // chooseLayout's
	// cuFFT's plans (real and paired layouts), or fft.cl's kernels and
	// buffers (portable).
	forwardPlan, inversePlan *fftPlan
	fftcl                    *fftclTransforms
	gather, mul, scatter     *Function
	geo, blocks, spec, pr    *Buffer
	spectra                  []*Buffer
}

// fftclTransforms are fft.cl's kernels and buffers: fft_pass, each
// transform's fft_local build (or nil), the twiddle tables by length, the
// passes' scratch buffer (nil where every transform runs by fft_local).
type fftclTransforms struct {
	pass    *Function
	local   []*Function
	roots   map[int]*Buffer
	scratch *Buffer
}

func (s *fftState) free() {
	bufs := append([]*Buffer{s.geo, s.blocks, s.spec, s.pr}, s.spectra...)
	if t := s.fftcl; t != nil {
		bufs = append(bufs, t.scratch)
		for _, b := range t.roots {
			bufs = append(bufs, b)
		}
	}
	for _, b := range bufs {
		if b != nil {
			b.Free()
		}
	}
	for _, p := range []*fftPlan{s.forwardPlan, s.inversePlan} {
		if p != nil {
			p.destroy()
		}
	}
}

// forward queues the forward transform of a batch's slots gathered in
// s.blocks and returns where their spectra are: s.spec (cuFFT, every
// slot of the plan) or s.blocks (fft.cl, in place, the first slots).
func (s *fftState) forward(e *Engine, slots int) (*Buffer, error) {
	if s.layout == portableLayout {
		return s.blocks, s.fftcl.run(e, s.conv, s.blocks, slots, 0)
	}
	return s.spec, s.forwardPlan.exec(s.blocks.Ptr(), s.spec.Ptr())
}

// inverse queues the inverse transform of a product in s.pr and returns
// where the blocks are: s.blocks (cuFFT) or s.pr (fft.cl, in place).
func (s *fftState) inverse(e *Engine, slots int) (*Buffer, error) {
	if s.layout == portableLayout {
		return s.pr, s.fftcl.run(e, s.conv, s.pr, slots, 1)
	}
	return s.blocks, s.inversePlan.exec(s.pr.Ptr(), s.blocks.Ptr())
}

// run queues kernels.FFTConv.TransformSteps over slots complex blocks in
// data, in place: forward (inverse 0) or inverse (1).
func (t *fftclTransforms) run(e *Engine, f *kernels.FFTConv, data *Buffer, slots int, inverse int32) error {
	for _, st := range f.TransformSteps(slots) {
		tr := f.Transforms[st.Transform]
		roots := t.roots[tr.Length]
		var err error
		switch {
		case st.CopyBack:
			err = data.CopyFromAsync(0, t.scratch, 0, st.Bytes, e.stream)
		case st.Local:
			grid, block := [3]uint32{uint32(st.Groups), 1, 1}, [3]uint32{uint32(st.LocalSize), 1, 1}
			err = t.local[st.Transform].Launch(grid, block, 0, e.stream, data, roots, int64(tr.Length), st.Lines, int64(tr.Stride), inverse)
		default:
			from, to := data, t.scratch
			if st.FromScratch {
				from, to = to, from
			}
			err = launchGrid(e, t.pass, st.Items, from, to, roots, int64(tr.Length), int64(st.Pass.P), int64(st.Pass.Radix), int64(tr.Stride), st.Lines, inverse)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// close releases every state; the engine's stream is idle.
func (m *fftMethod) close() {
	for _, s := range m.states {
		s.free()
	}
	clear(m.states)
}

// stateKey identifies a problem's FFT work: the slabs of one geometry
// share theirs.
func stateKey(p *nd.Problem) string {
	var b strings.Builder
	fmt.Fprint(&b, p.InShape, p.OutShape, p.Shift, p.Border, p.CVal)
	return b.String()
}

// temps: the FFT's block buffers are its own state's, not the engine's
// temporaries.
func (m *fftMethod) temps(*Engine, *nd.Problem) (n, bytes int) { return 0, 0 }

// fftLayout is how a problem's blocks are transformed on CUDA.
type fftLayout int

const (
	realLayout     fftLayout = iota // real blocks, cuFFT's real-to-complex and back
	pairedLayout                    // two real blocks per complex one, cuFFT's complex-to-complex
	portableLayout                  // paired blocks, fft.cl's transforms (as on OpenCL)
)

var layoutNames = map[string]fftLayout{"real": realLayout, "paired": pairedLayout, "fftcl": portableLayout}

// chooseLayout chooses how p's blocks are transformed. Two real blocks
// go in one complex block (the real and imaginary parts) through cuFFT's
// complex-to-complex transforms: on the H100 that beat cuFFT's
// real-to-complex ones on every workload measured, 1-D most of all (a 1-D
// real transform is a half-length complex one plus a pass over the whole
// spectrum); the figures are in docs/perf/fft.md (v5 measured). cuFFT
// transforms at most 3 axes together;
// kernels spanning more run through fft.cl's transforms, the kernels
// OpenCL runs. NDCONV_CUDA_FFT_LAYOUT=real, paired or fftcl forces a
// layout on problems of at most 3 axes (to compare them on a device).
func chooseLayout(p *nd.Problem) fftLayout {
	axes := 0
	for _, k := range p.KShape {
		if k > 1 {
			axes++
		}
	}
	if axes > maxFFTRank {
		return portableLayout
	}
	if l, ok := layoutNames[lookupEnv("NDCONV_CUDA_FFT_LAYOUT")]; ok {
		return l
	}
	return pairedLayout
}

// newFFTConv plans p's blocks in the layout chooseLayout chooses.
func newFFTConv(p *nd.Problem, lengths []int) (*kernels.FFTConv, fftLayout, error) {
	layout := chooseLayout(p)
	f, err := kernels.NewFFTConv(p, kernels.FFTConvOptions{
		RealBlocks:    layout == realLayout,
		Library:       layout != portableLayout,
		MaxLocalBytes: maxStaticShared, // fft_local's buffers are static shared memory
		Budget:        fftBudget,
		MaxBatch:      fftMaxBatch,
		Lengths:       lengths,
	})
	return f, layout, err
}

func (m *fftMethod) describe(e *Engine, p *nd.Problem) string {
	f, layout, err := newFFTConv(p, e.opt.Tuning.FFT.Slice())
	if err != nil || f == nil {
		return "cuFFT"
	}
	kind := [...]string{realLayout: "cuFFT real-to-complex", pairedLayout: "cuFFT paired complex", portableLayout: "fft.cl paired complex"}[layout]
	return fmt.Sprintf("%s blocks of %v, %d per batch", kind, f.Geometry.Length, f.Batch)
}

// state returns p's state, making it on first use; e.mu is held.
func (m *fftMethod) state(e *Engine, p *nd.Problem) (*fftState, error) {
	key := stateKey(p)
	if s := m.states[key]; s != nil {
		return s, nil
	}
	f, layout, err := newFFTConv(p, e.opt.Tuning.FFT.Slice())
	if err != nil || f == nil {
		return nil, err
	}
	if len(m.states) >= maxFFTStates {
		// Slabs of many geometries: keep the memory of a few.
		if err := e.stream.Synchronize(); err != nil {
			return nil, err
		}
		m.close()
	}
	s := &fftState{conv: f, layout: layout}
	if err := m.build(e, s); err != nil {
		e.stream.Synchronize()
		s.free()
		return nil, err
	}
	m.states[key] = s
	return s, nil
}

// build compiles the kernels, makes the transforms (cuFFT's plans or
// fft.cl's kernels) and buffers, and the kernels' spectra: each kernel's
// block through the forward transform (in the batch's first slot),
// conjugated and scaled. Paired blocks are Slots(Batch) complex
// transforms, their buffers of complex values.
func (m *fftMethod) build(e *Engine, s *fftState) error {
	f := s.conv
	src, err := kernels.Source("fftconv")
	if err != nil {
		return err
	}
	mod, err := e.dev.Module(src, "fftconv.cu", f.Defines)
	if err != nil {
		return err
	}
	for name, fn := range map[string]**Function{"fftconv_gather": &s.gather, "fftconv_multiply": &s.mul, "fftconv_scatter": &s.scatter} {
		if *fn, err = mod.Function(name); err != nil {
			return err
		}
	}
	kspec, err := mod.Function("fftconv_kernel_spectrum")
	if err != nil {
		return err
	}
	slots := f.Slots(f.Batch)
	blockBytes := 8
	switch s.layout {
	case realLayout:
		blockBytes = 4
		err = s.makePlans(e, realForward, realInverse, slots)
	case pairedLayout:
		err = s.makePlans(e, complexForward, complexInverse, slots)
	default:
		err = s.buildFFTCL(e, slots)
	}
	if err != nil {
		return err
	}
	if s.geo, err = e.upload(Bytes(f.Geo)); err != nil {
		return err
	}
	batchBytes, specBytes := slots*f.BlockValues*blockBytes, slots*f.SpectrumValues*8
	if s.blocks, err = e.dev.Pool().Get(batchBytes); err != nil {
		return err
	}
	if s.layout != portableLayout { // fft.cl transforms in place
		if s.spec, err = e.dev.Pool().Get(specBytes); err != nil {
			return err
		}
	}
	if s.pr, err = e.dev.Pool().Get(specBytes); err != nil {
		return err
	}
	// Finite values in every slot: a partial batch transforms stale slots
	// too with cuFFT (each transform of the batch is independent of the
	// others).
	if err := s.blocks.MemsetAsync(0, batchBytes, 0, e.stream); err != nil {
		return err
	}
	n := int64(f.SpectrumValues)
	for k := range f.Kernels {
		block := f.KernelSlot(k)
		if err := s.blocks.CopyFromHostAsync(0, Bytes(block), e.stream); err != nil {
			return err
		}
		spec, err := s.forward(e, 1)
		if err != nil {
			return err
		}
		spectrum, err := e.dev.Pool().Get(int(n) * 8)
		if err != nil {
			return err
		}
		s.spectra = append(s.spectra, spectrum)
		if err := spectrum.CopyFromAsync(0, spec, 0, int(n)*8, e.stream); err != nil {
			return err
		}
		if err := launchGrid(e, kspec, n, spectrum, n, 1/float32(f.BlockValues)); err != nil {
			return err
		}
		// The host's block must outlive its asynchronous copy.
		if err := e.stream.Synchronize(); err != nil {
			return err
		}
		runtime.KeepAlive(block)
	}
	return nil
}

// makePlans makes cuFFT's forward and inverse plans of a batch.
func (s *fftState) makePlans(e *Engine, forward, inverse fftKind, slots int) error {
	var err error
	lengths := s.conv.Geometry.Length
	if s.forwardPlan, err = e.dev.newFFTPlan(lengths, slots, forward, e.stream); err != nil {
		return err
	}
	s.inversePlan, err = e.dev.newFFTPlan(lengths, slots, inverse, e.stream)
	return err
}

// buildFFTCL compiles fft.cl's kernels (fft_pass, and fft_local per
// transform that takes it) and makes the twiddle tables and the scratch
// buffer of a batch.
func (s *fftState) buildFFTCL(e *Engine, slots int) error {
	f := s.conv
	src, err := kernels.Source("fft")
	if err != nil {
		return err
	}
	mod, err := e.dev.Module(src, "fft.cu", nil)
	if err != nil {
		return err
	}
	t := &fftclTransforms{local: make([]*Function, len(f.Transforms)), roots: map[int]*Buffer{}}
	s.fftcl = t
	if t.pass, err = mod.Function("fft_pass"); err != nil {
		return err
	}
	for i, tr := range f.Transforms {
		if tr.Local {
			local, err := e.dev.Module(src, "fft.cu", tr.LocalDefines)
			if err != nil {
				return err
			}
			if t.local[i], err = local.Function("fft_local"); err != nil {
				return err
			}
		}
		if t.roots[tr.Length] == nil {
			if t.roots[tr.Length], err = e.upload(Bytes(kernels.FFTRoots(tr.Length))); err != nil {
				return err
			}
		}
	}
	if f.Scratch() {
		t.scratch, err = e.dev.Pool().Get(slots * f.BlockValues * 8)
	}
	return err
}

// launchGrid launches a grid-stride kernel over total items on the
// engine's stream.
func launchGrid(e *Engine, fn *Function, total int64, args ...any) error {
	grid := [3]uint32{uint32(kernels.GridGroups(total)), 1, 1}
	return fn.Launch(grid, [3]uint32{kernels.GridLocal, 1, 1}, 0, e.stream, args...)
}

// launchRows launches fftconv.cl's gather or scatter over grid on the
// engine's stream.
func launchRows(e *Engine, fn *Function, grid kernels.FFTGrid, args ...any) error {
	var groups, local [3]uint32
	for i := range 3 {
		groups[i], local[i] = uint32(grid.Groups[i]), uint32(grid.Local[i])
	}
	return fn.Launch(groups, local, 0, e.stream, args...)
}

func (m *fftMethod) prepare(e *Engine, p *nd.Problem, in, out DevicePtr, _ [2]*Buffer) (*prepared, error) {
	pr := &prepared{}
	if slices.Contains(p.OutShape, 0) {
		return pr, nil
	}
	s, err := m.state(e, p)
	if err != nil || s == nil {
		return pr, err
	}
	f := s.conv
	bank := int64(len(f.Kernels))
	for b := range f.Batches {
		first, count := f.BatchBlocks(b)
		n, slots := int64(count), f.Slots(count)
		pr.launches = append(pr.launches, func() error {
			if err := launchRows(e, s.gather, f.GatherGrid(count), in, s.blocks, s.geo, int64(first), n, f.CVal); err != nil {
				return err
			}
			spec, err := s.forward(e, slots)
			if err != nil {
				return err
			}
			per := int64(f.SpectrumValues)
			for k, spectrum := range s.spectra {
				if err := launchGrid(e, s.mul, int64(slots)*per, spec, spectrum, s.pr, per, int64(slots)); err != nil {
					return err
				}
				blocks, err := s.inverse(e, slots)
				if err != nil {
					return err
				}
				if err := launchRows(e, s.scatter, f.ScatterGrid(count), blocks, out, s.geo, int64(first), n, int64(k), bank); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return pr, nil
}
