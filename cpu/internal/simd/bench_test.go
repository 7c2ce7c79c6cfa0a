package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/internal/cputime"
)

// BenchmarkSetTaps runs a k×k kernel's taps over one row of 512 outputs
// whose input rows stay in L1: the loop's own speed, without memory.
func BenchmarkSetTaps(b *testing.B) {
	for _, k := range []int{3, 7, 15} {
		b.Run(fmt.Sprintf("k%d", k), func(b *testing.B) {
			const n, pitch = 512, 512 + 24
			src := make([]float32, (k+1)*pitch)
			acc := make([]float32, n)
			var offs []int
			var w []float32
			for r := range k {
				for c := range k {
					offs = append(offs, r*pitch+c)
					w = append(w, 0.5)
				}
			}
			for b.Loop() {
				SetTaps(acc, src, offs, w)
			}
			b.ReportMetric(float64(n*k*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gtaps/s")
		})
	}
}

// BenchmarkBlock is BenchmarkSetTaps for BlockRows rows at once, each
// source vector loaded once for all of them.
func BenchmarkBlock(b *testing.B) {
	for _, k := range []int{3, 7, 15} {
		b.Run(fmt.Sprintf("k%d", k), func(b *testing.B) {
			const n, pitch = 512, 512 + 24
			src := make([]float32, (k+BlockRows)*pitch)
			out := make([]float32, BlockRows*n)
			var steps []int
			var w []float32
			for r := range k + BlockRows - 1 {
				for c := range k {
					mask := 0
					for i := range BlockRows {
						if r-i >= 0 && r-i < k {
							mask |= 1 << i
						}
						w = append(w, 0.5)
					}
					steps = append(steps, (r*pitch+c)<<8|mask)
				}
			}
			st := NewSteps(BlockRows, steps, w)
			for b.Loop() {
				Block(out, n, n, src, st)
			}
			b.ReportMetric(float64(BlockRows*n*k*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gtaps/s")
		})
	}
}

// BenchmarkFMAPeak is the arithmetic peak the loops above are measured
// against (one core).
func BenchmarkFMAPeak(b *testing.B) {
	var madds int64
	for b.Loop() {
		madds += FMAPeak(1 << 16)
	}
	b.ReportMetric(float64(madds)/b.Elapsed().Seconds()/1e9, "Gmadds/s")
}

// BenchmarkBank is BenchmarkBlock for a bank of BankSets k×k kernels over
// one output row: each source vector is loaded once for every kernel.
func BenchmarkBank(b *testing.B) {
	for _, k := range []int{3, 7} {
		b.Run(fmt.Sprintf("k%d", k), func(b *testing.B) {
			const n, pitch = 512, 512 + 24
			src := make([]float32, (k+1)*pitch)
			out := make([]float32, BankSets*n)
			var steps []int
			var w []float32
			for r := range k {
				for c := range k {
					steps = append(steps, (r*pitch+c)<<8|(1<<BankSets-1))
					for range BankSets {
						w = append(w, 0.5)
					}
				}
			}
			st := NewSteps(BankSets, steps, w)
			for b.Loop() {
				Block(out, n, n, src, st)
			}
			b.ReportMetric(float64(BankSets*n*k*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gtaps/s")
		})
	}
}

// BenchmarkTwin compares the pure-Go twin of SetTaps with the reference
// loop (tap by tap over the row) on a 7×7 kernel's taps over 512 outputs
// of random data, whose rows stay in L1.
func BenchmarkTwin(b *testing.B) {
	const k, n, pitch = 7, 512, 512 + 24
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, (k+1)*pitch)
	for i := range src {
		src[i] = rng.Float32()
	}
	acc := make([]float32, n)
	var offs []int
	var w []float32
	for r := range k {
		for c := range k {
			offs = append(offs, r*pitch+c)
			w = append(w, rng.Float32()-0.5)
		}
	}
	for _, impl := range []struct {
		name string
		fn   func(acc, src []float32, offs []int, w []float32)
	}{{"reference", setTapsGo[float32]}, {"twin", setTapsTwinF32}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.fn(acc, src, offs, w)
			}
			b.ReportMetric(float64(n*k*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gtaps/s")
		})
	}
}

// BenchmarkTwinTile runs a 7×7 kernel over one tile row of the CPU engine
// (2048 outputs at a pitch of 2054, random data), as the engine's direct
// method does: Block for BlockRows rows and SetTaps for one, through the
// pure-Go twin (blockTwin32, setTapsTwinF32) and through the loops in use
// (dispatch: assembly where the build and CPU have it), so that one run
// gives the twin's cost per fused multiply-add and its ratio to the SIMD
// path's: cpu-ns/FMA, the process's CPU time (steadier than the wall
// time on a shared machine; run it with -cpu 1). The rows are in the
// second-level cache, not the first.
func BenchmarkTwinTile(b *testing.B) {
	const k, n, pitch = 7, 2048, 2048 + 6
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, (k+BlockRows)*pitch)
	for i := range src {
		src[i] = rng.Float32()*2 - 1
	}
	kw := make([]float32, k*k)
	for i := range kw {
		kw[i] = rng.Float32() - 0.5
	}
	var offs, steps []int
	var w []float32
	for r := range k + BlockRows - 1 {
		for c := range k {
			if r < k {
				offs = append(offs, r*pitch+c)
			}
			mask := 0
			for i := range BlockRows {
				if r-i >= 0 && r-i < k {
					mask |= 1 << i
					w = append(w, kw[(r-i)*k+c])
				} else {
					w = append(w, 0)
				}
			}
			steps = append(steps, (r*pitch+c)<<8|mask)
		}
	}
	st := NewSteps(BlockRows, steps, w)
	out := make([]float32, BlockRows*n)
	for _, impl := range []struct {
		name string
		fmas int
		fn   func()
	}{
		{"block/twin", BlockRows * n * k * k, func() { blockTwin32(out, n, n, src, st.offs, st.setW) }},
		{"block/dispatch", BlockRows * n * k * k, func() { Block(out, n, n, src, st) }},
		{"settaps/twin", n * k * k, func() { setTapsTwinF32(out[:n], src, offs, kw) }},
		{"settaps/dispatch", n * k * k, func() { SetTaps(out[:n], src, offs, kw) }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			cpu := cputime.Process()
			for b.Loop() {
				impl.fn()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(impl.fmas), "ns/FMA")
			if end := cputime.Process(); end > 0 {
				b.ReportMetric(float64((end-cpu).Nanoseconds())/float64(b.N)/float64(impl.fmas), "cpu-ns/FMA")
			}
		})
	}
}
