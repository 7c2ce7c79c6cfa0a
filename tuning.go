package ndconv

import (
	"context"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// What the tuner (`ndconv tune`, bench.TuneWorkload) needs of the library:
// the GPU kernels' candidate decompositions, the tuning cache plans read
// (as FFTW's wisdom), and the machine's rates auto weighs devices with.

// Tuning is a GPU kernel's work decomposition (work-group shape, outputs
// per work-item, rows per strip; the FFT's transform lengths). Every
// decomposition gives the same bits; only the speed differs. The zero
// Tuning is the kernels' own choice.
type Tuning struct{ t plan.Tuning }

// String names the kernel source and its decomposition.
func (t Tuning) String() string { return t.t.String() }

// TuningCandidates lists the decompositions the tuner times for p (a
// normalized nd.Spec) run with method m on a GPU: the FFT's transform
// lengths for FFT, else the direct or separable kernels' shapes.
func TuningCandidates(p *nd.Problem, m Method) []Tuning {
	cs := plan.TuningCandidates(p, m)
	ts := make([]Tuning, len(cs))
	for i, c := range cs {
		ts[i] = Tuning{c}
	}
	return ts
}

// TuningCache is the file of tunings and rates plans read: for each device
// model and driver and each problem, the fastest decomposition measured,
// and the machine's CPU and GPU rates. It is safe for concurrent use.
type TuningCache struct{ c *plan.TuningCache }

// DefaultTuningPath is where plans look for the tuning cache:
// $NDCONV_TUNING, else tuning.json in ndconv's user cache directory.
func DefaultTuningPath() string { return plan.DefaultTuningPath() }

// OpenTuningCache reads the cache at path: a missing file is an empty
// cache, a damaged one an error naming the file.
func OpenTuningCache(path string) (*TuningCache, error) {
	c, err := plan.OpenTuningCache(path)
	if err != nil {
		return nil, err
	}
	return &TuningCache{c}, nil
}

// Store records t for p run by method m on dev (Save writes it out); a
// device whose model and driver cannot be identified is an error.
func (c *TuningCache) Store(dev DeviceName, p *nd.Problem, m Method, t Tuning) error {
	return c.c.Store(dev.dev(), p, m, t.t)
}

// Len is the number of tunings stored.
func (c *TuningCache) Len() int { return c.c.Len() }

// Save writes the cache to its file.
func (c *TuningCache) Save() error { return c.c.Save() }

// CPURates returns the CPU rates stored, false where none are.
func (c *TuningCache) CPURates() (CPURates, bool) {
	r, ok := c.c.CPURates()
	return CPURates{r}, ok
}

// StoreCPURates records this machine's CPU rates (Save writes them out).
func (c *TuningCache) StoreCPURates(r CPURates) { c.c.StoreCPURates(r.r) }

// GPURates returns the rates stored for dev, false where none are.
func (c *TuningCache) GPURates(dev DeviceName) (GPURates, bool) {
	r, ok := c.c.GPURates(dev.dev())
	return GPURates{r}, ok
}

// StoreGPURates records dev's rates (Save writes them out); a device whose
// model and driver cannot be identified is an error.
func (c *TuningCache) StoreGPURates(dev DeviceName, r GPURates) error {
	return c.c.StoreGPURates(dev.dev(), r.r)
}

// CPURates is what the CPU engine sustains, measured (MeasureCPURates):
// its multiply-add rate on every core, and the rate at which fresh host
// memory is first written.
type CPURates struct{ r plan.CPURates }

// String reads "82 G multiply-adds/s on 2 cores, fresh memory 0.33 GB/s".
func (r CPURates) String() string { return r.r.String() }

// GPURates is what a GPU and its host sustain, measured (MeasureGPURates):
// the driver's and the context's start, a kernel module's compilation, an
// execution's fixed cost, the transfer rates, the direct kernels' rate,
// and the FFT method's cost scale.
type GPURates struct{ r plan.GPURates }

// String names every rate, on one line.
func (r GPURates) String() string { return r.r.String() }

// FFTScale is the FFT method's cost scale on the GPU (AddFFTScale), 0
// where none is calibrated.
func (r GPURates) FFTScale() float64 { return r.r.FFTScale }

// AddFFTScale folds one workload's measurement into the FFT cost scale
// (a geometric mean over the workloads measured): p took fftMs by the FFT
// method and directMs by the direct method.
func (r *GPURates) AddFFTScale(p *nd.Problem, fftMs, directMs float64) {
	r.r.AddFFTScale(fftMs, plan.FFTCost(p), directMs, plan.DirectCost(p))
}

// MeasureCPURates times the CPU engine's direct method on 2048² float32
// 7×7 with workers goroutines (0: every core), and the first write of
// fresh memory.
func MeasureCPURates(ctx context.Context, workers int) (CPURates, error) {
	r, err := plan.MeasureCPURates(ctx, workers)
	return CPURates{r}, err
}

// MeasureGPURates measures dev's rates (a few seconds; call it before
// anything else in the process touches the GPU: its start is measured
// cold). Only devices whose MeasuresRates is true are measured; others are
// an error (they keep the default rates).
func MeasureGPURates(ctx context.Context, dev DeviceName) (GPURates, error) {
	r, err := plan.MeasureGPURates(ctx, dev.dev())
	return GPURates{r}, err
}
