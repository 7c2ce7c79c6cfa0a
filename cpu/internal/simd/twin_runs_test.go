package simd

import (
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// runsLoop is one loop that follows a row block's program (runsProgram).
type runsLoop[F nd.Float] struct {
	name string
	run  func(out []F, outPitch, n int, src []F, steps []int, w []F, prog []uint64)
}

// TestBlockRuns32 and TestBlockRuns64 compare the loops that follow a row
// block's program (the AVX2 and AVX-512 assembly where the CPU has them,
// the program's pure-Go reference blockRunsGo, and Block as dispatched)
// with setsGo on the steps the program was made from, bit for bit, for
// every output length 0..maxLength (AVX-512's masked pass below 96
// float32s, whole passes and the pass that ends at n above) at
// alignments 0–3, with sentinels around and between the rows. The steps
// are a random kernel's (1–6 × 1–6 taps, some of them zero, so runs break
// inside rows) for BlockRows rows at a random pitch, or random steps with
// random masks (runs of one step, empty masks), over values with zeros,
// infinities, NaN from ∞·0, subnormals and cancelling pairs.
func TestBlockRuns32(t *testing.T) { testBlockRuns(t, asmBlockRuns32(t.Logf)) }

func TestBlockRuns64(t *testing.T) { testBlockRuns(t, asmBlockRuns64(t.Logf)) }

func testBlockRuns[F nd.Float](t *testing.T, loops []runsLoop[F]) {
	loops = append(loops,
		runsLoop[F]{"twin", func(out []F, outPitch, n int, src []F, _ []int, _ []F, prog []uint64) {
			blockRunsGo(out, outPitch, n, src, prog)
		}},
		runsLoop[F]{"dispatch", func(out []F, outPitch, n int, src []F, steps []int, w []F, _ []uint64) {
			Block(out, outPitch, n, src, NewSteps(BlockRows, steps, w))
		}})
	rng := rand.New(rand.NewPCG(33, 1))
	cases := 0
	for align := 0; align < 4; align++ {
		for n := 0; n <= maxLength; n = nextLength(n) {
			steps, w, src := randomRowBlock[F](rng, n)
			prog := runsProgram(steps, w, BlockRows)
			pitch := n + guard + rng.IntN(3)
			size := guard + (BlockRows-1)*pitch + n + guard
			init := randomValues[F](rng, align+size)[align:]
			want := append([]F(nil), init...)
			setsGo(BlockRows, want[guard:], pitch, n, src, steps, w)
			for _, l := range loops {
				buf := append(make([]F, 0, align+size), make([]F, align)...)
				buf = append(buf, init...)[align:]
				l.run(buf[guard:], pitch, n, src, steps, w, prog)
				for i := range buf {
					if !same(buf[i], want[i]) {
						t.Fatalf("%s, %d steps, length %d, alignment %d, value %d of the rows and guards: %v, want %v", l.name, len(steps), n, align, i, buf[i], want[i])
					}
				}
			}
			cases++
		}
	}
	t.Logf("%d cases × %d loops", cases, len(loops))
}

// randomRowBlock returns the steps and weights of a random row block for
// n outputs and a source that holds every step's run: a kernel's taps
// for BlockRows rows (as cpu's blockSteps makes them), or random steps.
func randomRowBlock[F nd.Float](rng *rand.Rand, n int) (steps []int, w []F, src []F) {
	pitch := n + rng.IntN(9)
	if rng.IntN(4) == 0 {
		srcLen := n + 40
		for range rng.IntN(12) {
			steps = append(steps, rng.IntN(srcLen-n+1)<<8|rng.IntN(1<<BlockRows))
		}
		return steps, randomValues[F](rng, BlockRows*len(steps)), randomValues[F](rng, srcLen)
	}
	kr, kc := 1+rng.IntN(6), 1+rng.IntN(6)
	zeros := rng.IntN(3) // none, a few, many
	k := randomValues[F](rng, kr*kc)
	for i := range k {
		if zeros > 0 && rng.IntN(4-zeros) == 0 {
			k[i] = 0
		}
	}
	for r := range kr + BlockRows - 1 {
		for c := range kc {
			mask, ws := 0, make([]F, BlockRows)
			for i := range BlockRows {
				if r-i >= 0 && r-i < kr {
					if ws[i] = k[(r-i)*kc+c]; ws[i] != 0 {
						mask |= 1 << i
					}
				}
			}
			if mask != 0 {
				steps = append(steps, (r*pitch+c)<<8|mask)
				w = append(w, ws...)
			}
		}
	}
	return steps, w, randomValues[F](rng, (kr+BlockRows-1)*pitch+kc+n)
}
