package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestRowKernels compares dense rows and rows with zero taps with the generic
// loop, bit for bit, for widths 1..12, over every output length 0..40, with guard values around
// the accumulator that must never change.
func TestRowKernels(t *testing.T) {
	testRowKernels[float32](t)
	testRowKernels[float64](t)
}

func testRowKernels[F nd.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const guard = 4
	sentinel := F(math.Inf(-1))
	for width := 1; width <= 12; width++ {
		for n := 0; n <= 40; n++ {
			w64 := make([]float64, width)
			for i := range w64 {
				w64[i] = rng.Float64()*2 - 1
				if width > 2 && i == width/2 && n%2 == 0 {
					w64[i] = 0 // every other length runs the sparse path
				}
			}
			src := make([]F, n+width-1)
			for i := range src {
				src[i] = F(rng.Float64()*20 - 10)
			}
			buf := make([]F, n+2*guard)
			want := make([]F, n)
			for i := range buf {
				buf[i] = sentinel
			}
			acc := buf[guard : guard+n]
			for i := range acc {
				acc[i] = F(i) // set ignores what was there
			}
			wf := make([]F, width)
			for i, v := range w64 {
				wf[i] = F(v)
			}
			correlateRowGeneric(want, src, wf)
			taps, _ := newRowTaps[F](w64, 1)
			taps.set(acc, src)
			for i := range acc {
				if acc[i] != want[i] {
					t.Fatalf("width %d, length %d, element %d: %v, generic loop %v", width, n, i, acc[i], want[i])
				}
			}
			for i := 0; i < guard; i++ {
				if buf[i] != sentinel || buf[guard+n+i] != sentinel {
					t.Fatalf("width %d, length %d: a guard value changed", width, n)
				}
			}
		}
	}
}

// correlateRowGeneric is the definition every row kernel must equal bit for
// bit: acc[x] = fma(w[j], src[x+j], acc[x]) for each nonzero tap j in
// order, one correctly rounded fused multiply-add per tap — the order of
// operations every engine, CPU and GPU, follows.
func correlateRowGeneric[F nd.Float](acc, src, w []F) {
	src = src[:len(acc)+len(w)-1]
	for x := range acc {
		a := acc[x]
		for j, wj := range w {
			if wj != 0 {
				a = nd.FMA(wj, src[x+j], a)
			}
		}
		acc[x] = a
	}
}

type countingProgress struct{ last, total, calls int64 }

func (c *countingProgress) Report(done, total int64) {
	c.calls++
	c.last = max(c.last, done)
	c.total = total
}

// TestProgress: both methods report every work item, ending at the total.
func TestProgress(t *testing.T) {
	spec := nd.Spec{Shape: []int{300, 50}, In: nd.Float32, Kernels: []nd.Kernel{{Factors: [][]float64{{1, 2, 1}, {1, 1}}}}}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := nd.New(nd.Float32, 300, 50)
	dst, _ := nd.New(nd.Float32, 300, 50)
	for name, make := range map[string]func(*nd.Problem, Options) (Executable, error){
		"direct":    func(p *nd.Problem, o Options) (Executable, error) { return NewDirect(p, o), nil },
		"separable": NewSeparable,
	} {
		var c countingProgress
		// One worker, so Report calls arrive in order.
		e, err := make(p, Options{Workers: 1, Progress: &c})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Execute(t.Context(), dst, src); err != nil {
			t.Fatal(err)
		}
		if c.calls == 0 || c.last != c.total || c.calls != c.total {
			t.Errorf("%s: %d reports, last %d of %d", name, c.calls, c.last, c.total)
		}
	}
}
