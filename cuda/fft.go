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
// float32 FFT must take the problem (fftconv.Supported), cuFFT must load,
// and it transforms at most three axes together.
func FFTSupported(p *nd.Problem) error {
	if err := fftconv.Supported(p); err != nil {
		return err
	}
	if err := loadCUFFT(); err != nil {
		return fmt.Errorf("FFT unavailable because %w", err)
	}
	axes := 0
	for _, k := range p.KShape {
		if k > 1 {
			axes++
		}
	}
	if axes > maxFFTRank {
		return fmt.Errorf("FFT unavailable because cuFFT transforms at most %d axes, and the kernel spans %d", maxFFTRank, axes)
	}
	return nil
}

// FFTEngine executes one problem by FFT convolution: internal/fftconv's
// blocks, gathered and scattered by kernels/fftconv.cl (through NVRTC),
// transformed by cuFFT's real-to-complex and complex-to-real plans (made
// once per block shape, on the engine's stream, work areas from the
// device's pool), batch by batch; slab by slab, as the other methods, when
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
	g, err := fftconv.New(p, fftconv.Options{Workers: 1})
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
	conv                  *kernels.FFTConv
	forward, inverse      *fftPlan
	gather, mul, scatter  *Function
	geo, blocks, spec, pr *Buffer
	spectra               []*Buffer
}

func (s *fftState) free() {
	for _, b := range append([]*Buffer{s.geo, s.blocks, s.spec, s.pr}, s.spectra...) {
		if b != nil {
			b.Free()
		}
	}
	for _, p := range []*fftPlan{s.forward, s.inverse} {
		if p != nil {
			p.destroy()
		}
	}
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

func (m *fftMethod) describe(e *Engine, p *nd.Problem) string {
	f, err := kernels.NewFFTConv(p, kernels.FFTConvOptions{RealBlocks: true, Budget: fftBudget})
	if err != nil || f == nil {
		return "cuFFT"
	}
	return fmt.Sprintf("cuFFT blocks of %v, %d per batch", f.Geometry.Length, f.Batch)
}

// state returns p's state, making it on first use; e.mu is held.
func (m *fftMethod) state(e *Engine, p *nd.Problem) (*fftState, error) {
	key := stateKey(p)
	if s := m.states[key]; s != nil {
		return s, nil
	}
	f, err := kernels.NewFFTConv(p, kernels.FFTConvOptions{RealBlocks: true, Budget: fftBudget})
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
	s := &fftState{conv: f}
	if err := m.build(e, s); err != nil {
		e.stream.Synchronize()
		s.free()
		return nil, err
	}
	m.states[key] = s
	return s, nil
}

// build compiles the kernels, makes the plans and buffers, and the
// kernels' spectra: each kernel's block through the forward plan (in the
// batch's first slot), conjugated and scaled.
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
	lengths := f.Geometry.Length
	if s.forward, err = e.dev.newFFTPlan(lengths, f.Batch, false, e.stream); err != nil {
		return err
	}
	if s.inverse, err = e.dev.newFFTPlan(lengths, f.Batch, true, e.stream); err != nil {
		return err
	}
	if s.geo, err = e.upload(Bytes(f.Geo)); err != nil {
		return err
	}
	realBytes, specBytes := f.Batch*f.BlockValues*4, f.Batch*f.SpectrumValues*8
	if s.blocks, err = e.dev.Pool().Get(realBytes); err != nil {
		return err
	}
	if s.spec, err = e.dev.Pool().Get(specBytes); err != nil {
		return err
	}
	if s.pr, err = e.dev.Pool().Get(specBytes); err != nil {
		return err
	}
	// Finite values in every slot: a partial batch transforms stale slots
	// too (each transform of the batch is independent of the others).
	if err := s.blocks.MemsetAsync(0, realBytes, 0, e.stream); err != nil {
		return err
	}
	n := int64(f.SpectrumValues)
	for _, k := range f.Kernels {
		if err := s.blocks.CopyFromHostAsync(0, Bytes(k), e.stream); err != nil {
			return err
		}
		if err := s.forward.exec(s.blocks.Ptr(), s.spec.Ptr()); err != nil {
			return err
		}
		spectrum, err := e.dev.Pool().Get(int(n) * 8)
		if err != nil {
			return err
		}
		s.spectra = append(s.spectra, spectrum)
		if err := spectrum.CopyFromAsync(0, s.spec, 0, int(n)*8, e.stream); err != nil {
			return err
		}
		if err := launchGrid(e, kspec, n, spectrum, n, 1/float32(f.BlockValues)); err != nil {
			return err
		}
		// The host's block must outlive its asynchronous copy.
		if err := e.stream.Synchronize(); err != nil {
			return err
		}
	}
	return nil
}

// launchGrid launches a grid-stride kernel over total items on the
// engine's stream.
func launchGrid(e *Engine, fn *Function, total int64, args ...any) error {
	grid := [3]uint32{uint32(kernels.GridGroups(total)), 1, 1}
	return fn.Launch(grid, [3]uint32{kernels.GridLocal, 1, 1}, 0, e.stream, args...)
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
		n := int64(count)
		pr.launches = append(pr.launches, func() error {
			if err := launchGrid(e, s.gather, n*int64(f.BlockValues), in, s.blocks, s.geo, int64(first), n, f.CVal); err != nil {
				return err
			}
			if err := s.forward.exec(s.blocks.Ptr(), s.spec.Ptr()); err != nil {
				return err
			}
			per := int64(f.SpectrumValues)
			for k, spectrum := range s.spectra {
				if err := launchGrid(e, s.mul, n*per, s.spec, spectrum, s.pr, per, n); err != nil {
					return err
				}
				if err := s.inverse.exec(s.pr.Ptr(), s.blocks.Ptr()); err != nil {
					return err
				}
				if err := launchGrid(e, s.scatter, n*int64(f.Outputs), s.blocks, out, s.geo, int64(first), n, int64(k), bank); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return pr, nil
}
