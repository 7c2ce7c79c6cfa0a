package plan

import (
	"context"
	"errors"

	"github.com/ndconv/ndconv/nd"
)

// newComplex plans a complex problem as its real parts (nd.RealParts) on
// one device with one method: the part on the input's real parts chooses,
// the other follows, so both add the same products in the same order on
// every device, and whatever backend runs real problems runs complex ones.
func newComplex(p *nd.Problem, opt Options) (*Executable, error) {
	parts := p.RealParts()
	re, err := New(parts.Re, opt)
	if err != nil {
		return nil, err
	}
	r := &complexRunner{parts: parts, re: re}
	if parts.Im != nil {
		opt.Device, opt.Method, opt.Tuning = re.Device, re.Method, re.Tuning
		if r.im, err = New(parts.Im, opt); err != nil {
			re.Close()
			return nil, err
		}
	}
	return &Executable{Problem: p, Device: re.Device, Method: re.Method, Tuning: re.Tuning, run: r}, nil
}

// complexRunner runs a complex problem's real parts and combines them.
type complexRunner struct {
	parts  nd.RealParts
	re, im *Executable
}

func (r *complexRunner) Execute(ctx context.Context, dst, src nd.Array) error {
	xr, xi := src.Parts()
	a, err := r.runPart(ctx, r.re, xr)
	if err != nil {
		return err
	}
	var b nd.Array
	if r.im != nil {
		if b, err = r.runPart(ctx, r.im, xi); err != nil {
			return err
		}
	}
	switch a := a.Data.(type) {
	case []float32:
		bs, _ := nd.Slice[float32](b)
		nd.Combine(r.parts, dst.Data, a, bs)
	case []float64:
		bs, _ := nd.Slice[float64](b)
		nd.Combine(r.parts, dst.Data, a, bs)
	}
	return nil
}

// runPart runs one part problem into a new accumulator-typed array.
func (r *complexRunner) runPart(ctx context.Context, e *Executable, src nd.Array) (nd.Array, error) {
	out, err := nd.New(e.Problem.Out, e.Problem.FullShape()...)
	if err != nil {
		return nd.Array{}, err
	}
	return out, e.Execute(ctx, out, src)
}

func (r *complexRunner) Close() error {
	err := r.re.Close()
	if r.im != nil {
		err = errors.Join(err, r.im.Close())
	}
	return err
}
