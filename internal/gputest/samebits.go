package gputest

import (
	"context"
	"fmt"
	"math"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// SameBitsAsCPU runs the case on the CPU engine with the same method
// ("direct" or "separable") and compares got with it bit for bit (NaNs of
// any payload agreeing): every engine adds the same products in the same
// order, so any difference is a defect. It returns "" or the first
// difference.
func SameBitsAsCPU(c enginetest.Case, method string, got nd.Array) string {
	want, err := CPUResult(c, method)
	if err != nil {
		return err.Error()
	}
	if msg := SameBits(got, want); msg != "" {
		return fmt.Sprintf("%s (%s)", msg, method)
	}
	return ""
}

// CPUResult is case c's output from the CPU engine's method ("direct" or
// "separable"): the bits every device must give.
func CPUResult(c enginetest.Case, method string) (nd.Array, error) {
	p, err := c.Spec.Normalize()
	if err != nil {
		return nd.Array{}, err
	}
	var engine cpu.Executable
	switch method {
	case "direct":
		engine = cpu.NewDirect(p, cpu.Options{})
	case "separable":
		if engine, err = cpu.NewSeparable(p, cpu.Options{}); err != nil {
			return nd.Array{}, err
		}
	default:
		return nd.Array{}, fmt.Errorf("no CPU method %q", method)
	}
	want, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		return nd.Array{}, err
	}
	if err := engine.Execute(context.Background(), want, c.Input); err != nil {
		return nd.Array{}, fmt.Errorf("CPU engine: %w", err)
	}
	return want, nil
}

// SameBits compares a device's output with the CPU's bit for bit, NaN
// payloads aside (any NaN equals any NaN: a GPU's NaN from ∞ − ∞ is
// canonical, x86's carries a sign), and says where they first differ.
func SameBits(got, want nd.Array) string {
	x, y := got.Float64s(), want.Float64s()
	if len(x) != len(y) || got.DType() != want.DType() {
		return fmt.Sprintf("%d %v values, the CPU engine's %d %v", len(x), got.DType(), len(y), want.DType())
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) && !(math.IsNaN(x[i]) && math.IsNaN(y[i])) {
			return fmt.Sprintf("value %d is %v, the CPU engine's %v", i, x[i], y[i])
		}
	}
	return ""
}
