package gpu

import "github.com/ndconv/ndconv/kernels"

// What the engine's tests (package gpu_test, which opens devices through
// the bindings) reach inside the package for.

// Pieces is how many chunks an engine cuts its problem into.
func Pieces(e *Engine) (int, error) {
	chunks, err := e.chunks()
	return len(chunks), err
}

// SetDirectCopies makes e register arrays of registerMin bytes or more
// and copy input runs of directMin bytes or more straight from them.
func SetDirectCopies(e *Engine, registerMin, directMin int) {
	e.registerMin, e.directCopyMin = registerMin, directMin
}

// SetFFTMaxBatch caps the FFT's blocks per batch (0: none) and
// SetFFTIndex64 makes its kernels index in 64 bits, for the engines made
// until they are set back.
func SetFFTMaxBatch(n int)         { fftMaxBatch = n }
func SetFFTIndex64(wide bool)      { fftIndex64 = wide }
func FFTStates(e *FFTEngine) int   { return len(e.method.(fftMethod)) }
func UsedDirect(e *FFTEngine) bool { return e.UsedDirect() }

// FFTPlan is the FFT engine's plan of its whole problem's blocks.
func FFTPlanOf(e *FFTEngine) (batches, batch int, defines []string, err error) {
	f, _, err := e.newFFTConv(e.p)
	if err != nil || f == nil {
		return 0, 0, nil, err
	}
	return f.Batches, f.Batch, f.Defines, nil
}

// Registered reports whether dev has a registration covering b, whether
// none is in use, and the last registration the driver refused.
func Registered(dev Device, b []byte) (covered, idle bool, failed error) {
	r, ok := dev.(Registrar)
	if !ok {
		return false, true, nil
	}
	h := r.HostRegs()
	h.mu.Lock()
	defer h.mu.Unlock()
	lo, hi := byteRange(b)
	idle = true
	for _, e := range h.entries {
		if e.inUse != 0 {
			idle = false
		}
	}
	return h.find(lo, hi) != nil, idle, h.failed
}

// SeparableOptions are the limits NewSeparable plans within on dev.
func SeparableOptionsOn(dev Device) kernels.SeparableOptions {
	e := &Engine{plan: dev}
	return e.separableOptions()
}
