package plan

import (
	"context"
	"errors"
	"runtime"

	"github.com/ndconv/ndconv/nd"
)

// newComplex plans a complex problem as its real parts (nd.RealParts) on
// one device with one method: the part on the input's real parts chooses,
// the other follows, so both add the same products in the same order on
// every device, and whatever backend runs real problems runs complex ones.
func newComplex(p *nd.Problem, opt Options) (*Executable, error) {
	parts := p.RealParts()
	n, whole := 1, opt.Progress
	if parts.Im != nil {
		n = 2
	}
	opt.Progress = nd.PartProgress(whole, 0, n)
	re, err := New(parts.Re, opt)
	if err != nil {
		return nil, err
	}
	r := &complexRunner{parts: parts, re: re, workers: opt.Workers}
	if r.workers <= 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	if parts.Im != nil {
		opt.Device, opt.Method, opt.Tuning = re.Device, re.Method, re.Tuning
		opt.Progress = nd.PartProgress(whole, 1, n)
		if r.im, err = New(parts.Im, opt); err != nil {
			re.Close()
			return nil, err
		}
	}
	return &Executable{Problem: p, Device: re.Device, Method: re.Method, Tuning: re.Tuning, Choice: re.Choice, run: r}, nil
}

// complexRunner runs a complex problem's real parts and combines them. It
// keeps its scratch arrays (the input's parts, the parts' outputs) from one
// Execute to the next.
type complexRunner struct {
	parts  nd.RealParts
	re, im *Executable
	// xr and xi hold a complex input's parts; a and b the outputs of re
	// and im.
	xr, xi, a, b nd.Array
	workers      int // goroutines splitting and combining
}

func (r *complexRunner) Compile() error {
	if err := r.re.Compile(); err != nil || r.im == nil {
		return err
	}
	return r.im.Compile()
}

func (r *complexRunner) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := r.scratch(src); err != nil {
		return err
	}
	xr := src
	if src.DType().IsComplex() {
		spread(r.workers, src.Len(), func(lo, hi int) {
			nd.SplitParts(nd.SliceData(r.xr.Data, lo, hi), nd.SliceData(r.xi.Data, lo, hi), nd.SliceData(src.Data, lo, hi))
		})
		xr = r.xr
	}
	if err := r.re.Execute(ctx, r.a, xr); err != nil {
		return err
	}
	if r.im != nil {
		if err := r.im.Execute(ctx, r.b, r.xi); err != nil {
			return err
		}
	}
	// Voxel v's outputs are dst[v*K, (v+1)*K), its parts' outputs
	// a[v*stride, (v+1)*stride) and the same of b.
	stride := len(r.parts.Re.Kernels)
	voxels := dst.Len() / r.parts.Kernels
	spread(r.workers, voxels, func(lo, hi int) {
		part := func(x nd.Array) any {
			if x.Data == nil {
				return nil
			}
			return nd.SliceData(x.Data, lo*stride, hi*stride)
		}
		out := nd.SliceData(dst.Data, lo*r.parts.Kernels, hi*r.parts.Kernels)
		switch a := part(r.a).(type) {
		case []float32:
			b, _ := part(r.b).([]float32)
			nd.Combine(r.parts, out, a, b)
		case []float64:
			b, _ := part(r.b).([]float64)
			nd.Combine(r.parts, out, a, b)
		}
	})
	return nil
}

// spread calls fn on up to workers consecutive ranges [lo, hi) covering
// [0, n), concurrently: memory-bound loops over large arrays.
func spread(workers, n int, fn func(lo, hi int)) {
	const minPerWorker = 1 << 16
	workers = max(1, min(workers, n/minPerWorker))
	if err := nd.ForEach(workers, workers, nil, func(_, w int) { fn(n*w/workers, n*(w+1)/workers) }); err != nil {
		panic(err) // a bug, raised on the caller's goroutine
	}
}

// scratch allocates the scratch arrays on first use.
func (r *complexRunner) scratch(src nd.Array) error {
	if r.a.Data != nil {
		return nil
	}
	var err error
	alloc := func(dst *nd.Array, dt nd.DType, shape []int) {
		if err == nil {
			*dst, err = nd.New(dt, shape...)
		}
	}
	alloc(&r.a, r.re.Problem.Out, r.re.Problem.FullShape())
	if r.im != nil {
		alloc(&r.b, r.im.Problem.Out, r.im.Problem.FullShape())
		alloc(&r.xr, r.im.Problem.In, src.Shape)
		alloc(&r.xi, r.im.Problem.In, src.Shape)
	}
	if err != nil {
		r.a = nd.Array{}
	}
	return err
}

func (r *complexRunner) Close() error {
	err := r.re.Close()
	if r.im != nil {
		err = errors.Join(err, r.im.Close())
	}
	return err
}
