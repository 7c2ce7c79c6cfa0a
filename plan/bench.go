package plan

import (
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// What the bench and the tuner ask of an executable beyond running it:
// the kernels it runs, and its time on data already on the device.

// implementer is a runner that names its kernel implementations (the GPU
// engines).
type implementer interface{ Implementation() string }

// Implementation names the kernel implementations and parameters the
// executable runs ("" where the runner does not say: the CPU engines).
func (e *Executable) Implementation() string {
	if i, ok := e.run.(implementer); ok {
		return i.Implementation()
	}
	return ""
}

// deviceTimer is a runner that can be timed on device arrays between the
// device's events (the GPU engines' TimeDevice).
type deviceTimer interface {
	TimeDevice(dst, src *gpu.Array, repeats int) ([]float64, error)
	Device() gpu.Device
}

// TimesOnDevice reports whether TimeOnDevice can time the executable (its
// runner is a GPU engine's).
func (e *Executable) TimesOnDevice() bool {
	_, ok := e.run.(deviceTimer)
	return ok
}

// TimeOnDevice uploads src to the executable's device, times repeats
// executions on device arrays between the device's events (no transfers)
// and copies the output back into dst, returning each execution's
// milliseconds. Executables TimesOnDevice refuses are an
// *nd.UnsupportedError.
func (e *Executable) TimeOnDevice(dst, src nd.Array, repeats int) ([]float64, error) {
	timer, ok := e.run.(deviceTimer)
	if !ok {
		return nil, &nd.UnsupportedError{What: "timing on device arrays", Value: e.Method.String() + " on " + e.Device.String()}
	}
	dev := timer.Device()
	q, err := dev.NewQueue()
	if err != nil {
		return nil, err
	}
	defer q.Close()
	in, err := gpu.NewArray(dev, src.DType(), src.Shape...)
	if err != nil {
		return nil, err
	}
	defer in.Free()
	if err := in.Write(q, src.Bytes()); err != nil {
		return nil, err
	}
	out, err := gpu.NewArray(dev, dst.DType(), dst.Shape...)
	if err != nil {
		return nil, err
	}
	defer out.Free()
	ms, err := timer.TimeDevice(out, in, max(repeats, 1))
	if err != nil {
		return nil, err
	}
	return ms, out.Read(q, dst.Bytes())
}

// Tuning is a GPU kernel's work decomposition as Options.Tuning and the
// tuning cache hold it (kernels.Tuning), named here so that the root names
// it through the planner.
type Tuning = kernels.Tuning

// TuningCandidates are the decompositions the tuner times for p run with
// method m: the FFT's transform lengths (kernels.FFTCandidates) for FFT,
// none for gemm and winograd, else the direct or separable kernels' shapes
// (kernels.TuningCandidates).
func TuningCandidates(p *nd.Problem, m Method) []Tuning {
	switch m {
	case FFT:
		return kernels.FFTCandidates(p)
	case Gemm, Winograd:
		return nil // their decompositions are no kernels.Tuning shapes yet: nothing to tune
	}
	return kernels.TuningCandidates(p, m == Separable)
}
