package nd

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestToPlanar compares the tiled transpose with the definition,
// dst[k*n + v] = src[v*bank + k], for every element size, banks around the
// tile's side and voxel counts around a goroutine's share, on one worker
// and on three; nothing past the output may change.
func TestToPlanar(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []DType{Uint8, Int16, Float32, Float64, Complex128} {
		for _, bank := range []int{1, 2, 5, 17, 63, 64, 65, 130} {
			for _, n := range []int{0, 1, 63, 65, transposeItem + 3} {
				for _, workers := range []int{1, 3} {
					src, _ := New(dt, n*bank)
					b := src.Bytes()
					for i := range b {
						b[i] = byte(r.Uint32())
					}
					size := dt.Size()
					guard, _ := New(dt, n*bank+7)
					g := guard.Bytes()
					for i := range g {
						g[i] = 0xA5
					}
					dst := Array{Data: SliceData(guard.Data, 0, n*bank), Shape: []int{n * bank}}
					if err := ToPlanar(dst, src, bank, workers); err != nil {
						t.Fatalf("%v bank %d n %d: %v", dt, bank, n, err)
					}
					for v := range n {
						for k := range bank {
							if !slices.Equal(g[(k*n+v)*size:][:size], b[(v*bank+k)*size:][:size]) {
								t.Fatalf("%v bank %d n %d workers %d: plane %d voxel %d differs", dt, bank, n, workers, k, v)
							}
						}
					}
					for i, c := range g[n*bank*size:] {
						if c != 0xA5 {
							t.Fatalf("%v bank %d n %d: byte %d past the output written", dt, bank, n, i)
						}
					}
					// FromPlanar moves it back, bit for bit, within its output.
					back, _ := New(dt, n*bank+7)
					bb := back.Bytes()
					for i := range bb {
						bb[i] = 0x5A
					}
					if err := FromPlanar(Array{Data: SliceData(back.Data, 0, n*bank), Shape: []int{n * bank}}, dst, bank, workers); err != nil {
						t.Fatalf("%v bank %d n %d: FromPlanar: %v", dt, bank, n, err)
					}
					if !slices.Equal(bb[:n*bank*size], b) || slices.ContainsFunc(bb[n*bank*size:], func(c byte) bool { return c != 0x5A }) {
						t.Fatalf("%v bank %d n %d workers %d: FromPlanar(ToPlanar(x)) is not x, or wrote past its output", dt, bank, n, workers)
					}
				}
			}
		}
	}
}

// TestToPlanarRefuses: outputs of another type or length, a bank that does
// not divide the elements, and overlapping arrays are ArgumentErrors.
func TestToPlanarRefuses(t *testing.T) {
	a, _ := New(Float32, 12)
	b, _ := New(Float32, 12)
	c, _ := New(Int32, 12)
	d, _ := New(Float32, 10)
	for name, f := range map[string]func() error{
		"dtype":   func() error { return ToPlanar(c, a, 3, 1) },
		"length":  func() error { return ToPlanar(d, a, 3, 1) },
		"bank":    func() error { return ToPlanar(b, a, 5, 1) },
		"zero":    func() error { return ToPlanar(b, a, 0, 1) },
		"overlap": func() error { return ToPlanar(a, a, 3, 1) },
	} {
		var ae *ArgumentError
		if err := f(); !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an ArgumentError", name, err)
		}
	}
}

func TestBankLayoutNames(t *testing.T) {
	for _, l := range []BankLayout{Interleaved, Planar} {
		if got, err := ParseBankLayout(" " + l.String() + " "); err != nil || got != l {
			t.Errorf("ParseBankLayout(%q) = %v, %v", l.String(), got, err)
		}
	}
	var ue *UnsupportedError
	if _, err := ParseBankLayout("nchw"); !errors.As(err, &ue) {
		t.Errorf("ParseBankLayout(nchw): %v", err)
	}
	if got := PlanarShape([]int{4, 5, 3}); !slices.Equal(got, []int{3, 4, 5}) || !IsPlanarShape(got, []int{4, 5}, 3) {
		t.Errorf("PlanarShape(4,5,3) = %v", got)
	}
}
