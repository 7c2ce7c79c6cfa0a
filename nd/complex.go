package nd

import "slices"

// Complex reports whether p has a complex output: complex data or weights
// (Normalize gives those a complex output), or a complex output asked for.
// Engines never execute such a problem; its RealParts do.
func (p *Problem) Complex() bool { return p.Out.IsComplex() }

// RealParts is a complex problem as real problems, the way scipy.ndimage
// computes it: complex filtering is linear in the parts, so with
// x = xr + i·xi and w = wr + i·wi (w already conjugated for correlation),
//
//	re = corr(xr, wr) − corr(xi, wi)
//	im = corr(xr, wi) + corr(xi, wr)
//
// Each real correlation is an ordinary Problem, run by any engine with its
// exact accumulation; Combine then adds the parts in the accumulator's
// precision and rounds each once to the output's part type. So a complex
// result has the same bits wherever its real parts do, on every device.
type RealParts struct {
	// Re filters the input's real parts (the input itself when real), Im
	// its imaginary parts (nil for real input). Both output the
	// accumulator type (float32, or float64 for a Wide problem).
	Re, Im *Problem
	// Kernels is the complex problem's number of kernels K. With complex
	// weights (Imag) each part is a bank of 2K kernels, the K real parts
	// and then the K imaginary parts, so the input is read once for both;
	// otherwise of the K kernels.
	Kernels int
	Imag    bool
}

// RealParts splits a complex problem (Complex) into its real problems.
func (p *Problem) RealParts() RealParts {
	rp := RealParts{Kernels: len(p.Kernels)}
	for _, k := range p.Kernels {
		rp.Imag = rp.Imag || k.Imag != nil
	}
	var kernels []Weights
	for _, k := range p.Kernels {
		w := k
		if k.Imag != nil {
			w = Weights{Dense: k.Dense, Factors: Factorize(p.KShape, k.Dense)}
		}
		kernels = append(kernels, w)
	}
	if rp.Imag {
		for _, k := range p.Kernels {
			imag := k.Imag
			if imag == nil {
				imag = make([]float64, len(k.Dense))
			}
			kernels = append(kernels, Weights{Dense: imag, Factors: Factorize(p.KShape, imag)})
		}
	}
	acc := Float32
	if p.Wide {
		acc = Float64
	}
	part := func(in DType, cval float64) *Problem {
		return &Problem{
			InShape: slices.Clone(p.InShape), OutShape: slices.Clone(p.OutShape),
			In: in, Out: acc, Wide: p.Wide, Border: p.Border, CVal: cval,
			KShape: slices.Clone(p.KShape), Shift: slices.Clone(p.Shift),
			Kernels: kernels, Bank: len(kernels) > 1,
		}
	}
	rp.Re = part(p.In.Part(), p.CVal)
	if p.In.IsComplex() {
		rp.Im = part(p.In.Part(), p.CValImag)
	}
	return rp
}

// Combine writes the complex output dst (a complex array's data, in the
// problem's layout dst[voxel*K + k]) from a, the output of Re, and b, the
// output of Im (nil when there is none), both in the parts' layout
// [voxel*len(part kernels) + j]: re = a[k] − b[K+k] and im = a[K+k] + b[k],
// each one operation in F, then rounded once to dst's part type.
func Combine[F Float](rp RealParts, dst any, a, b []F) {
	k, stride := rp.Kernels, rp.Kernels
	if rp.Imag {
		stride = 2 * k
	}
	// Blocks of whole voxels are combined into re and im, then stored by
	// StoreComplex's loop for dst's type; a loop per case keeps each
	// simple.
	voxels := len(a) / stride
	step := max(1, 4096/k)
	re, im := make([]F, step*k), make([]F, step*k)
	for v0 := 0; v0 < voxels; v0 += step {
		m := min(step, voxels-v0)
		r, c := re[:m*k], im[:m*k]
		av := a[v0*stride : (v0+m)*stride]
		var bv []F
		if b != nil {
			bv = b[v0*stride : (v0+m)*stride]
		}
		switch {
		case rp.Imag && b != nil:
			for v := range m {
				for i := range k {
					o, p := v*k+i, v*stride+i
					r[o], c[o] = av[p]-bv[p+k], av[p+k]+bv[p]
				}
			}
		case rp.Imag:
			for v := range m {
				for i := range k {
					r[v*k+i], c[v*k+i] = av[v*stride+i], av[v*stride+k+i]
				}
			}
		case b != nil:
			copy(r, av)
			copy(c, bv)
		default:
			copy(r, av)
			clear(c)
		}
		StoreComplex(dst, v0*k, 1, r, c)
	}
}
