package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ndconv/ndconv/nd"
)

// guarded is a fast-family engine (FFT, gemm, winograd) whose method
// mixes every input of its reach into every output, zero weights too: an
// input it cannot carry — NaN, Inf, or values whose products or
// transforms could overflow float32 — runs the direct method instead,
// whose bits those outputs must carry. The direct engine is made the
// first time it is needed, on the device opened again.
type guarded struct {
	*Engine
	// carries reports whether the method carries the input src (on the
	// host, scanned for NaN, Inf and its largest magnitude).
	carries func(src nd.Array) bool
	// mayNeed reports whether a device input of dtype d must be read back
	// and scanned: false where no value of d can fail carries.
	mayNeed func(d nd.DType) bool

	mu     sync.Mutex
	direct *Engine // the fallback, made when first needed
	opened func() (Device, error)
}

// Close releases the engine and the direct fallback's.
func (e *guarded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.direct != nil {
		errs = append(errs, e.direct.Close())
	}
	return errors.Join(append(errs, e.Engine.Close())...)
}

func (e *guarded) directEngine() (*Engine, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.direct == nil {
		dev, err := e.opened()
		if err != nil {
			return nil, err
		}
		d, err := NewDirect(dev, e.p, e.opt)
		if err != nil {
			return nil, err
		}
		e.direct = d
	}
	return e.direct, nil
}

// UsedDirect reports whether the engine has run the direct method for an
// input its method cannot carry.
func (e *guarded) UsedDirect() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.direct != nil
}

// Execute correlates host arrays by the engine's method or, for inputs
// it cannot carry, the direct method.
func (e *guarded) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := checkArrays(e.p, dst, src); err != nil {
		return err
	}
	if !e.carries(src) {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.Execute(ctx, dst, src)
	}
	return e.Engine.Execute(ctx, dst, src)
}

// deviceNeedsDirect checks the arrays and, where the dtype may need it,
// reads src back to look for NaN, Inf and overflow.
func (e *guarded) deviceNeedsDirect(dst, src *Array) (bool, error) {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return false, err
	}
	if !e.mayNeed(src.DType) {
		return false, nil
	}
	host, err := nd.New(src.DType, src.Shape...)
	if err != nil {
		return false, err
	}
	err = e.begin(context.Background(), false)
	if err == nil {
		err = src.Read(e.queue, host.Bytes())
	}
	e.Engine.mu.Unlock()
	if err != nil {
		return false, err
	}
	return !e.carries(host), nil
}

// ExecuteDevice correlates device arrays; an input that may need it is
// read back once to look for NaN, Inf and overflow.
func (e *guarded) ExecuteDevice(ctx context.Context, dst, src *Array) error {
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

// TimeDevice times the method on device arrays (the input's scan comes
// before, untimed).
func (e *guarded) TimeDevice(dst, src *Array, repeats int) ([]float64, error) {
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

// ExecuteDeviceAfter waits on the host for the caller's queue and then
// runs ExecuteDevice: the input's scan reads it back first anyway, so
// the call cannot return before its work is done.
func (e *guarded) ExecuteDeviceAfter(ctx context.Context, dst, src *Array, caller Queue) error {
	if err := caller.Finish(); err != nil {
		return fmt.Errorf("the caller's queue: %w", err)
	}
	return e.ExecuteDevice(ctx, dst, src)
}
