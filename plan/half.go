package plan

import (
	"context"
	"io"
	"runtime"

	"github.com/ndconv/ndconv/nd"
)

// newHalf plans a problem with float16 data or output on a GPU as its
// float32 twin. float16 is storage only — every engine computes it in
// float32 — so widening the input to float32 on the host (exact), running
// the twin, and rounding its float32 output to float16 on the host as the
// CPU engine stores gives the CPU engine's bits; the GPU kernels take no
// float16 themselves.
func newHalf(p *nd.Problem, opt Options) (*Executable, error) {
	twin := *p
	if twin.In == nd.Float16 {
		twin.In = nd.Float32
	}
	if twin.Out == nd.Float16 {
		twin.Out = nd.Float32
	}
	e, err := New(&twin, opt)
	if err != nil {
		return nil, err
	}
	r := &halfRunner{p: p, twin: e, workers: opt.Workers}
	if r.workers <= 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	return &Executable{Problem: p, Device: e.Device, Method: e.Method, Tuning: e.Tuning, run: r}, nil
}

// halfRunner converts between float16 and its twin's float32 around the
// twin's execution, keeping its float32 arrays from one Execute to the
// next.
type halfRunner struct {
	p       *nd.Problem
	twin    *Executable
	in, out nd.Array // the twin's float32 input and output, where converted
	workers int
}

func (r *halfRunner) Compile() error { return r.twin.Compile() }

func (r *halfRunner) Execute(ctx context.Context, dst, src nd.Array) error {
	x, y := src, dst
	var err error
	if r.p.In == nd.Float16 {
		if r.in.Data == nil {
			if r.in, err = nd.New(nd.Float32, src.Shape...); err != nil {
				return err
			}
		}
		x = r.in
		wide := x.Data.([]float32)
		spread(r.workers, src.Len(), func(lo, hi int) { nd.Load(wide[lo:hi], src.Data, lo) })
	}
	if r.p.Out == nd.Float16 {
		if r.out.Data == nil {
			if r.out, err = nd.New(nd.Float32, dst.Shape...); err != nil {
				return err
			}
		}
		y = r.out
	}
	if err := r.twin.Execute(ctx, y, x); err != nil {
		return err
	}
	if r.p.Out == nd.Float16 {
		wide := y.Data.([]float32)
		spread(r.workers, dst.Len(), func(lo, hi int) { nd.Store(dst.Data, lo, 1, wide[lo:hi]) })
	}
	return nil
}

func (r *halfRunner) Close() error { return r.twin.Close() }

var _ io.Closer = (*halfRunner)(nil)
