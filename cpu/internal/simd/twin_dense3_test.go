package simd

import (
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// dense3Loop is one dense 3×3 loop.
type dense3Loop[F nd.Float] struct {
	name string
	run  func(out []F, outPitch, n int, src []F, srcPitch int, w []F)
}

// TestDense3F32 and TestDense3F64 compare the dense 3×3 loops (the AVX2
// and AVX-512 assembly where the CPU has them, and Block as dispatched on
// the steps blockSteps makes for such a kernel) with dense3Go, bit for
// bit, for every output length 0..maxLength (AVX-512's masked pass below
// 64 float32s, whole passes and the pass that ends at n above) at
// alignments 0–3, random pitches,
// sentinels around and between the rows, values with zeros, infinities,
// NaN from ∞·0, subnormals and cancelling pairs in the source.
func TestDense3F32(t *testing.T) { testDense3(t, asmDense3F32(t.Logf)) }

func TestDense3F64(t *testing.T) { testDense3(t, asmDense3F64(t.Logf)) }

func testDense3[F nd.Float](t *testing.T, loops []dense3Loop[F]) {
	loops = append(loops, dense3Loop[F]{"dispatch", func(out []F, outPitch, n int, src []F, srcPitch int, w []F) {
		steps, ws := dense3StepsFor(w, srcPitch, 1)
		st := NewSteps(BlockRows, steps, ws)
		if st.d3 == nil {
			t.Fatal("a dense 3×3 kernel's steps not recognised")
		}
		Block(out, outPitch, n, src, st)
	}})
	rng := rand.New(rand.NewPCG(33, 3))
	cases := 0
	for align := 0; align < 4; align++ {
		for n := 0; n <= maxLength; n = nextLength(n) {
			w := randomValues[F](rng, 9)
			for i := range w {
				for w[i] == 0 {
					w[i] = F(rng.Float64() - 0.5)
				}
			}
			spitch := n + 2 + rng.IntN(9)
			src := randomValues[F](rng, 5*spitch+n+2+rng.IntN(3))
			opitch := n + guard + rng.IntN(3)
			size := guard + (BlockRows-1)*opitch + n + guard
			init := randomValues[F](rng, align+size)[align:]
			want := append([]F(nil), init...)
			dense3Go(want[guard:], opitch, n, src, spitch, w)
			for _, l := range loops {
				buf := append(append(make([]F, 0, align+size), make([]F, align)...), init...)[align:]
				l.run(buf[guard:], opitch, n, src, spitch, w)
				for i := range buf {
					if !same(buf[i], want[i]) {
						t.Fatalf("%s, length %d, alignment %d, pitch %d, value %d of the rows and guards: %v, want %v", l.name, n, align, spitch, i, buf[i], want[i])
					}
				}
			}
			cases++
		}
	}
	t.Logf("%d cases × %d loops", cases, len(loops))
}

// dense3StepsFor is blockSteps for a 3×3 kernel w over BlockRows rows at
// pitch, its columns stride values apart.
func dense3StepsFor[F nd.Float](w []F, pitch, stride int) (steps []int, ws []F) {
	for r := range BlockRows + 2 {
		for c := range 3 {
			mask, set := 0, make([]F, BlockRows)
			for i := range BlockRows {
				if kr := r - i; kr >= 0 && kr < 3 {
					if set[i] = w[kr*3+c]; set[i] != 0 {
						mask |= 1 << i
					}
				}
			}
			if mask != 0 {
				steps = append(steps, (r*pitch+c*stride)<<8|mask)
				ws = append(ws, set...)
			}
		}
	}
	return steps, ws
}

// TestFindDense3 checks which steps findDense3 takes: a dense 3×3
// kernel's, at any pitch and first offset; not one with a zero tap, with
// columns 4 values apart (interleaved channels), or of another size.
func TestFindDense3(t *testing.T) {
	w := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	steps, ws := dense3StepsFor(w, 40, 1)
	if d := findDense3(steps, ws); d == nil || d.pitch != 40 || d.base != 0 || d.w != [9]float32(w) {
		t.Fatalf("dense 3×3: %+v", d)
	}
	for i := range steps {
		steps[i] += 7 << 8
	}
	if d := findDense3(steps, ws); d == nil || d.base != 7 {
		t.Fatalf("dense 3×3 from offset 7: %+v", d)
	}
	zero := append([]float32(nil), w...)
	zero[4] = 0
	for name, c := range map[string]struct {
		w      []float32
		stride int
	}{"a zero tap": {zero, 1}, "channels": {w, 4}} {
		if steps, ws := dense3StepsFor(c.w, 40, c.stride); findDense3(steps, ws) != nil {
			t.Errorf("%s: taken as a dense 3×3 kernel", name)
		}
	}
	steps, ws = dense3StepsFor(w, 40, 1)
	if findDense3(steps[:17], ws[:17*BlockRows]) != nil {
		t.Error("17 steps taken as a dense 3×3 kernel")
	}
}
