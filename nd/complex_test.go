package nd

import (
	"slices"
	"testing"
)

// TestNormalizeComplex: complex weights are conjugated for correlation and
// flipped, not conjugated, for convolution; tiny parts drop to zero on
// their own; the output type follows scipy's rule.
func TestNormalizeComplex(t *testing.T) {
	k := Kernel{Shape: []int{3}, Weights: []float64{1, 1e-17, 3}, Imag: []float64{4, 5, 1e-17}}
	for _, c := range []struct {
		convolve    bool
		dense, imag []float64
	}{
		{false, []float64{1, 0, 3}, []float64{-4, -5, 0}},
		{true, []float64{3, 0, 1}, []float64{0, 5, 4}},
	} {
		s := Spec{Shape: []int{5}, In: Int16, Kernels: []Kernel{k}, Convolve: c.convolve}
		p, err := s.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		w := p.Kernels[0]
		if !slices.Equal(w.Dense, c.dense) || !slices.Equal(w.Imag, c.imag) || w.Factors != nil {
			t.Errorf("convolve=%v: %v %v %v, want %v %v and no factors", c.convolve, w.Dense, w.Imag, w.Factors, c.dense, c.imag)
		}
		if p.Out != Complex64 || !p.Complex() || p.Wide {
			t.Errorf("int16 with complex weights: output %v, wide %v", p.Out, p.Wide)
		}
	}
}

// TestRealParts: a bank of a complex and a real kernel over complex data
// becomes two real problems (real and imaginary parts of the data, their
// cvals) of a bank of 2K kernels, the real parts then the imaginary ones
// (zero for the real kernel); Combine puts re = a − b′ and im = a′ + b
// together.
func TestRealParts(t *testing.T) {
	s := Spec{Shape: []int{4}, In: Complex128, CVal: 1, CValImag: -2, Border: Constant, Kernels: []Kernel{
		{Shape: []int{2}, Weights: []float64{1, 2}, Imag: []float64{3, 4}},
		{Shape: []int{2}, Weights: []float64{5, 6}},
	}}
	p, err := s.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	rp := p.RealParts()
	if rp.Kernels != 2 || !rp.Imag || rp.Re == nil || rp.Im == nil {
		t.Fatalf("%+v", rp)
	}
	for _, q := range []*Problem{rp.Re, rp.Im} {
		if q.In != Float64 || q.Out != Float64 || !q.Wide || !q.Bank || len(q.Kernels) != 4 || q.Complex() {
			t.Fatalf("part %+v", q)
		}
	}
	if rp.Re.CVal != 1 || rp.Im.CVal != -2 {
		t.Errorf("cvals %v %v", rp.Re.CVal, rp.Im.CVal)
	}
	want := [][]float64{{1, 2}, {5, 6}, {-3, -4}, {0, 0}}
	for i, k := range rp.Re.Kernels {
		if !slices.Equal(k.Dense, want[i]) || k.Factors == nil {
			t.Errorf("part kernel %d: %v (factors %v), want %v", i, k.Dense, k.Factors, want[i])
		}
	}
	// One voxel: a = [a0 a1 a0′ a1′], b likewise.
	a, b := []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}
	dst := make([]complex128, 2)
	Combine(rp, dst, a, b)
	if dst[0] != complex(1-30, 3+10) || dst[1] != complex(2-40, 4+20) {
		t.Errorf("Combine: %v", dst)
	}
}
