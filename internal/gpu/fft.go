package gpu

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// fftMaxBatch (when positive) caps the blocks per batch and fftIndex64
// makes the kernels index in 64 bits: for tests on small problems.
var (
	fftMaxBatch = 0
	fftIndex64  = false
)

// maxFFTStates bounds the block shapes whose buffers an engine keeps (the
// slabs' first, middle and last).
const maxFFTStates = 3

// fftMethod is FFT convolution as the engine's method: internal/fftconv's
// blocks, gathered and scattered by kernels/fftconv.cl, transformed batch
// by batch by the device's FFTLibrary or kernels/fft.cl (chooseLayout).
// Each problem's (or slab's) state is kept until the engine closes.
type fftMethod map[string]*fftState // by stateKey

// fftWork is what the FFT's blocks and spectra may take of a budget.
func fftWork(lim Limits, budget int64) int64 { return min(budget/4, lim.FFTBudget) }

// fftState is what one problem's FFT convolution keeps on the device.
type fftState struct {
	conv                     *kernels.FFTConv
	layout                   fftLayout
	gather, mul, scatter     Kernel
	geo, blocks, spec, pr    Buffer
	spectra                  Buffer  // every kernel's, one after another, conjugated and scaled
	forwardPlan, inversePlan FFTPlan // the library's
	// fft.cl's: fft_pass, each transform's fft_local (or nil), the twiddle
	// tables by length, the passes' scratch buffer (or nil).
	pass    Kernel
	local   []Kernel
	roots   map[int]Buffer
	scratch Buffer
}

func (s *fftState) free() {
	closeAll(nil, Buffer.Free, s.geo, s.blocks, s.spec, s.pr, s.spectra)
	closeAll(nil, Buffer.Free, append([]Buffer{s.scratch}, slices.Collect(maps.Values(s.roots))...)...)
	closeAll(nil, FFTPlan.Destroy, s.forwardPlan, s.inversePlan)
}

// transform queues the forward transform of s.blocks' first slots, or the
// inverse of s.pr's, and returns where the result is: the library's
// output, or for fft.cl, which transforms in place, its input.
func (s *fftState) transform(e *Engine, slots int, inverse bool) (Buffer, error) {
	in, out, plan, dir := s.blocks, s.spec, s.forwardPlan, int32(0)
	if inverse {
		in, out, plan, dir = s.pr, s.blocks, s.inversePlan, 1
	}
	if s.layout != portableLayout {
		return out, plan.Exec(in, out)
	}
	f := s.conv
	for _, st := range f.TransformSteps(slots) {
		tr := f.Transforms[st.Transform]
		roots := s.roots[tr.Length]
		var err error
		switch {
		case st.CopyBack:
			err = e.queue.Copy(in, 0, s.scratch, 0, st.Bytes)
		case st.Local:
			k := s.local[st.Transform]
			size := min(st.LocalSize, k.MaxGroupSize())
			err = e.queue.Launch(k, [3]int{st.Groups, 1, 1}, [3]int{size, 1, 1}, in, roots, int64(tr.Length), st.Lines, int64(tr.Stride), dir)
		default:
			from, to := in, s.scratch
			if st.FromScratch {
				from, to = to, from
			}
			err = launchGrid(e, s.pass, st.Items, from, to, roots, int64(tr.Length), int64(st.Pass.P), int64(st.Pass.Radix), int64(tr.Stride), st.Lines, dir)
		}
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// close releases every state; the engine's queue is idle.
func (m fftMethod) close() {
	for _, s := range m {
		s.free()
	}
	clear(m)
}

// stateKey identifies a problem's FFT work; slabs of one geometry share it.
func stateKey(p *nd.Problem) string {
	return fmt.Sprint(p.InShape, p.OutShape, p.Shift, p.Border, p.CVal)
}

// temps: the FFT's buffers are its state's, not the engine's.
func (m fftMethod) temps(*Engine, *nd.Problem) (n, bytes int) { return 0, 0 }

// launches: the FFT's few kernels are built with the first execution.
func (m fftMethod) launches(*Engine, *nd.Problem) ([]*kernels.Launch, error) { return nil, nil }

// fftLayout is how a problem's blocks are transformed.
type fftLayout int

const (
	realLayout     fftLayout = iota // real blocks, the library's real-to-complex and back
	pairedLayout                    // two real blocks per complex one, the library's complex-to-complex
	portableLayout                  // paired blocks, fft.cl's transforms
)

var layoutNames = map[string]fftLayout{"real": realLayout, "paired": pairedLayout, "fftcl": portableLayout}

// chooseLayout chooses how p's blocks are transformed on dev: fft.cl's
// transforms without an FFT library or beyond MaxFFTRank axes, else the
// paired layout, the fastest measured (docs/perf/fft.md).
// NDCONV_CUDA_FFT_LAYOUT=real, paired or fftcl forces one, to compare.
func chooseLayout(dev Planner, p *nd.Problem) fftLayout {
	if lib, ok := dev.(FFTLibrary); !ok || lib.FFTAvailable() != nil {
		return portableLayout
	}
	axes := 0
	for _, k := range p.KShape {
		if k > 1 {
			axes++
		}
	}
	if axes > MaxFFTRank {
		return portableLayout
	}
	if l, ok := layoutNames[os.Getenv("NDCONV_CUDA_FFT_LAYOUT")]; ok {
		return l
	}
	return pairedLayout
}

// newFFTConv plans p's blocks in the layout chooseLayout chooses.
func (e *Engine) newFFTConv(p *nd.Problem) (*kernels.FFTConv, fftLayout, error) {
	layout := chooseLayout(e.plan, p)
	budget, err := e.budget()
	if err != nil {
		return nil, layout, err
	}
	f, err := kernels.NewFFTConv(p, kernels.FFTConvOptions{
		RealBlocks:    layout == realLayout,
		Library:       layout != portableLayout,
		MaxLocalBytes: e.plan.Limits().MaxLocalBytes, // fft_local's buffers are local memory
		Budget:        fftWork(e.plan.Limits(), budget),
		Index64:       fftIndex64,
		MaxBatch:      fftMaxBatch,
		Lengths:       e.opt.Tuning.FFTLengths(),
	})
	return f, layout, err
}

func (m fftMethod) describe(e *Engine, p *nd.Problem) string {
	f, layout, err := e.newFFTConv(p)
	if err != nil || f == nil {
		return "fft"
	}
	kind := [...]string{realLayout: "cuFFT real-to-complex", pairedLayout: "cuFFT paired complex", portableLayout: "fft.cl paired complex"}[layout]
	return fmt.Sprintf("%s blocks of %v, %d per batch", kind, f.Geometry.Length, f.Batch)
}

// state returns p's state, making it on first use; e.mu is held.
func (m fftMethod) state(e *Engine, p *nd.Problem) (*fftState, error) {
	key := stateKey(p)
	if s := m[key]; s != nil {
		return s, nil
	}
	f, layout, err := e.newFFTConv(p)
	if err != nil || f == nil {
		return nil, err
	}
	if len(m) >= maxFFTStates {
		// Slabs of many geometries: keep the memory of a few.
		if err := e.queue.Finish(); err != nil {
			return nil, err
		}
		m.close()
	}
	s := &fftState{conv: f, layout: layout}
	if err := s.build(e); err != nil {
		e.queue.Finish()
		s.free()
		return nil, err
	}
	m[key] = s
	return s, nil
}

// build builds the kernels, transforms and buffers, and the kernels'
// spectra: each kernel's block forward transformed, conjugated and
// scaled. Paired blocks are Slots(Batch) complex transforms; the products
// and their inverses are Group planes of as many.
func (s *fftState) build(e *Engine) error {
	f := s.conv
	var kspec Kernel
	var err error
	built := map[string]*Kernel{"fftconv_gather": &s.gather, "fftconv_multiply": &s.mul,
		"fftconv_scatter": &s.scatter, "fftconv_kernel_spectrum": &kspec}
	for name, k := range built {
		if *k, err = e.dev.Kernel("fftconv", f.Defines, name); err != nil {
			return err
		}
	}
	slots, group := f.Slots(f.Batch), f.Group
	blockBytes, forward, inverse := 8, ComplexForward, ComplexInverse
	if s.layout == realLayout {
		blockBytes, forward, inverse = 4, RealForward, RealInverse
	}
	if s.layout == portableLayout {
		err = s.buildFFTCL(e, group*slots)
	} else {
		lib := e.dev.(FFTLibrary)
		if s.forwardPlan, err = lib.FFTPlan(f.Geometry.Length, slots, forward, e.queue); err == nil {
			s.inversePlan, err = lib.FFTPlan(f.Geometry.Length, group*slots, inverse, e.queue)
		}
	}
	if err != nil {
		return err
	}
	if s.geo, err = e.upload(nd.AsBytes(f.Geo)); err != nil {
		return err
	}
	// fft.cl transforms the blocks in place; a library needs a group's
	// inverses beside them.
	batchBytes, specBytes := slots*f.BlockValues*blockBytes, slots*f.SpectrumValues*8
	blocksBytes := group * batchBytes
	if s.layout == portableLayout {
		blocksBytes = batchBytes
	} else if s.spec, err = e.dev.Scratch(specBytes); err != nil {
		return err
	}
	if s.blocks, err = e.dev.Scratch(blocksBytes); err != nil {
		return err
	}
	if s.pr, err = e.dev.Scratch(group * specBytes); err != nil {
		return err
	}
	// Finite values in every slot: a partial batch transforms stale slots
	// too.
	if err := e.queue.Fill(s.blocks, 0, blocksBytes, 0); err != nil {
		return err
	}
	if err := e.queue.Fill(s.pr, 0, group*specBytes, 0); err != nil {
		return err
	}
	n := f.SpectrumValues * 8
	if s.spectra, err = e.dev.Scratch(len(f.Kernels) * n); err != nil {
		return err
	}
	for k := range f.Kernels {
		if err := e.queue.Write(s.blocks, 0, nd.AsBytes(f.KernelSlot(k))); err != nil {
			return err
		}
		spec, err := s.transform(e, 1, false)
		if err != nil {
			return err
		}
		if err := e.queue.Copy(s.spectra, k*n, spec, 0, n); err != nil {
			return err
		}
	}
	all := int64(len(f.Kernels) * f.SpectrumValues)
	if err := launchGrid(e, kspec, all, s.spectra, all, 1/float32(f.BlockValues)); err != nil {
		return err
	}
	return e.queue.Finish()
}

// buildFFTCL builds fft.cl's kernels and makes the twiddle tables and
// the scratch buffer of a batch.
func (s *fftState) buildFFTCL(e *Engine, slots int) error {
	f := s.conv
	s.local, s.roots = make([]Kernel, len(f.Transforms)), map[int]Buffer{}
	var err error
	if s.pass, err = e.dev.Kernel("fft", nil, "fft_pass"); err != nil {
		return err
	}
	for i, tr := range f.Transforms {
		if tr.Local {
			if s.local[i], err = e.dev.Kernel("fft", tr.LocalDefines, "fft_local"); err != nil {
				return err
			}
		}
		if s.roots[tr.Length] == nil {
			if s.roots[tr.Length], err = e.upload(nd.AsBytes(kernels.FFTRoots(tr.Length))); err != nil {
				return err
			}
		}
	}
	if f.Scratch() {
		s.scratch, err = e.dev.Scratch(slots * f.BlockValues * 8)
	}
	return err
}

// launchGrid launches a grid-stride kernel over total items.
func launchGrid(e *Engine, k Kernel, total int64, args ...any) error {
	return e.queue.Launch(k, [3]int{kernels.GridGroups(total), 1, 1}, [3]int{kernels.GridLocal, 1, 1}, args...)
}

func (m fftMethod) prepare(e *Engine, p *nd.Problem, in, out Buffer, _ [2]Buffer) (*prepared, error) {
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
			g := f.GatherGrid(count)
			if err := e.queue.Launch(s.gather, g.Groups, g.Local, in, s.blocks, s.geo, int64(first), n, f.CVal); err != nil {
				return err
			}
			spec, err := s.transform(e, slots, false)
			if err != nil {
				return err
			}
			per, plane := int64(f.SpectrumValues), int64(f.Slots(f.Batch))
			for k0 := int64(0); k0 < bank; k0 += int64(f.Group) {
				group := min(int64(f.Group), bank-k0)
				if err := launchGrid(e, s.mul, int64(slots)*per, spec, s.spectra, s.pr, per, int64(slots), k0, group, plane); err != nil {
					return err
				}
				// The group's planes up to its last slot.
				blocks, err := s.transform(e, int((group-1)*plane)+slots, true)
				if err != nil {
					return err
				}
				g := f.ScatterGrid(count)
				if err := e.queue.Launch(s.scatter, g.Groups, g.Local, blocks, out, s.geo, int64(first), n, k0, group, plane, bank); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return pr, nil
}
