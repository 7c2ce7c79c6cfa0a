package simd

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// kernels is one implementation of the loops for one float type.
type kernels[F nd.Float] struct {
	name  string
	taps  func(acc, src []F, offs []int, w []F)
	set   func(acc, src []F, offs []int, w []F)
	row   func(acc, src, w []F)
	axpy  func(y, x []F, a F)
	block func(out []F, outPitch, n int, src []F, steps []int, w []F)
	bank  func(out []F, outPitch, n int, src []F, steps []int, w []F)
}

// maxLength covers every block width of every instruction set (the widest
// is 8 vectors of 16) twice over, and every tail.
const maxLength = 2*128 + 40

// guard is the number of sentinel values on each side of an output.
const guard = 5

func TestLoops32(t *testing.T) {
	testLoops(t, append(asmKernels32(t.Logf),
		kernels[float32]{"dispatch", Taps[float32], SetTaps[float32], Row[float32], Axpy[float32], blockPrepared[float32], bankPrepared[float32]},
		kernels[float32]{"twin", tapsTwinF32, setTapsTwinF32, rowTwin32, axpyTwin32, blockTwinPrepared[float32](BlockRows), blockTwinPrepared[float32](BankSets)}))
}

func TestLoops64(t *testing.T) {
	testLoops(t, append(asmKernels64(t.Logf),
		kernels[float64]{"dispatch", Taps[float64], SetTaps[float64], Row[float64], Axpy[float64], blockPrepared[float64], bankPrepared[float64]},
		kernels[float64]{"twin", tapsTwinF64, setTapsTwinF64, rowTwin64, axpyTwin64, blockTwinPrepared[float64](BlockRows), blockTwinPrepared[float64](BankSets)}))
}

// blockTwinPrepared is the pure-Go twin of Block for sets sets, whatever
// the dispatch runs, with the steps prepared on the spot.
func blockTwinPrepared[F nd.Float](sets int) func(out []F, outPitch, n int, src []F, steps []int, w []F) {
	return func(out []F, outPitch, n int, src []F, steps []int, w []F) {
		st := NewSteps(sets, steps, w)
		if is32[F]() {
			blockTwin32(f32s(out), outPitch, n, f32s(src), st.offs, f32s2(st.setW))
		} else {
			blockSets(f64s(out), outPitch, n, f64s(src), sets, st.offs, f64s2(st.setW), setTapsTwinF64)
		}
	}
}

// testLoops compares each implementation with the pure-Go loops, bit for
// bit, for every output length 0..maxLength at alignments 0–3, with
// sentinels around the output that must not change.
func testLoops[F nd.Float](t *testing.T, impls []kernels[F]) {
	rng := rand.New(rand.NewPCG(15, 1))
	for _, k := range impls {
		for align := 0; align < 4; align++ {
			for n := 0; n <= maxLength; n = nextLength(n) {
				ntaps := 1 + rng.IntN(12)
				w := randomValues[F](rng, ntaps)
				src := randomValues[F](rng, align+n+ntaps+20)[align:]
				offs := make([]int, ntaps)
				for i := range offs {
					offs[i] = rng.IntN(len(src) - n + 1) // any order, repeats allowed
				}
				init := randomValues[F](rng, n)

				check := func(what string, run, ref func(acc []F)) {
					t.Helper()
					want := append([]F(nil), init...)
					ref(want)
					buf := randomValues[F](rng, align+n+2*guard)[align:]
					sentinels := append([]F(nil), buf...)
					acc := buf[guard : guard+n]
					copy(acc, init)
					run(acc)
					for i := range acc {
						if !same(acc[i], want[i]) {
							t.Fatalf("%s %s, length %d, alignment %d, element %d: %v, want %v", k.name, what, n, align, i, acc[i], want[i])
						}
					}
					for i := 0; i < guard; i++ {
						if !same(buf[i], sentinels[i]) || !same(buf[guard+n+i], sentinels[guard+n+i]) {
							t.Fatalf("%s %s, length %d, alignment %d: a value outside the output changed", k.name, what, n, align)
						}
					}
				}
				check("taps", func(acc []F) { k.taps(acc, src, offs, w) }, func(acc []F) { tapsGo(acc, src, offs, w) })
				check("set taps", func(acc []F) { k.set(acc, src, offs, w) }, func(acc []F) { setTapsGo(acc, src, offs, w) })
				check("row", func(acc []F) { k.row(acc, src, w) }, func(acc []F) { rowGo(acc, src, w) })
				checkBlock(t, k.name+" block", BlockRows, k.block, rng, n, align, src)
				checkBlock(t, k.name+" bank", BankSets, k.bank, rng, n, align, src)
				check("axpy", func(acc []F) { k.axpy(acc, src, w[0]) }, func(acc []F) { axpyGo(acc, src, w[0]) })
			}
		}
	}
}

// nextLength is the output length after n that the loop tests run: every
// one, or under -short (the arm64 run under qemu-user, which emulates
// each instruction) every one up to 40, which holds every tail and a few
// whole blocks, and then every 7th.
func nextLength(n int) int {
	if testing.Short() && n >= 40 {
		return n + 7
	}
	return n + 1
}

// conversions is one implementation of the integer loads and stores.
type conversions struct {
	name        string
	loadUint8   func([]float32, []uint8)
	loadUint16  func([]float32, []uint16)
	storeUint8  func([]uint8, []float32)
	storeUint16 func([]uint16, []float32)
}

// TestConversions compares each implementation of the integer loads and
// stores with the pure-Go loops for every length 0..maxLength at
// alignments 0–3, with sentinels around the output.
func TestConversions(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	impls := append(asmConversions(t.Logf), conversions{"exported", LoadUint8, LoadUint16, StoreUint8, StoreUint16},
		conversions{"saturating Go", loadUint8Go, loadUint16Go, storeUint8Sat, storeUint16Sat})
	for _, c := range impls {
		for align := 0; align < 4; align++ {
			for n := 0; n <= maxLength; n++ {
				floats := storeInputs(rng, align+n)[align:]
				bytes := make([]uint8, align+n)
				words := make([]uint16, align+n)
				for i := range bytes {
					bytes[i], words[i] = uint8(rng.Uint32()), uint16(rng.Uint32())
				}
				bytes, words = bytes[align:], words[align:]
				checkConversion(t, c.name+" load uint8", n, align, func(dst []float32) { c.loadUint8(dst, bytes) }, func(dst []float32) { loadUint8Go(dst, bytes) })
				checkConversion(t, c.name+" load uint16", n, align, func(dst []float32) { c.loadUint16(dst, words) }, func(dst []float32) { loadUint16Go(dst, words) })
				checkConversion(t, c.name+" store uint8", n, align, func(dst []uint8) { c.storeUint8(dst, floats) }, func(dst []uint8) { storeUint8Go(dst, floats) })
				checkConversion(t, c.name+" store uint16", n, align, func(dst []uint16) { c.storeUint16(dst, floats) }, func(dst []uint16) { storeUint16Go(dst, floats) })
			}
		}
	}
}

func checkConversion[T float32 | uint8 | uint16](t *testing.T, what string, n, align int, run, ref func([]T)) {
	t.Helper()
	buf := make([]T, align+n+2*guard)[align:]
	for i := range buf {
		buf[i] = T(i*7 + 3)
	}
	sentinels := append([]T(nil), buf...)
	want := make([]T, n)
	ref(want)
	out := buf[guard : guard+n]
	run(out)
	for i := range out {
		if out[i] != want[i] {
			t.Fatalf("%s, length %d, alignment %d, element %d: %v, want %v", what, n, align, i, out[i], want[i])
		}
	}
	for i := 0; i < guard; i++ {
		if buf[i] != sentinels[i] || buf[guard+n+i] != sentinels[guard+n+i] {
			t.Fatalf("%s, length %d, alignment %d: a value outside the output changed", what, n, align)
		}
	}
}

// storeInputs returns float32 values around and beyond the integer ranges:
// halves (ties), negatives, NaN, infinities and values past the top.
func storeInputs(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		switch r := rng.IntN(10); r {
		case 0:
			s[i] = float32(math.NaN())
		case 1:
			s[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
		case 2:
			s[i] = float32(rng.IntN(600)-100) + 0.5
		case 3:
			s[i] = float32(rng.IntN(70000)) + 0.5
		case 4:
			s[i] = -float32(rng.Float64())
		default:
			s[i] = float32(rng.Float64()*80000 - 1000)
		}
	}
	return s
}

// blockPrepared and bankPrepared are Block with the steps prepared on the
// spot, in the form of the assembly loops.
func blockPrepared[F nd.Float](out []F, outPitch, n int, src []F, steps []int, w []F) {
	Block(out, outPitch, n, src, NewSteps(BlockRows, steps, w))
}

func bankPrepared[F nd.Float](out []F, outPitch, n int, src []F, steps []int, w []F) {
	Block(out, outPitch, n, src, NewSteps(BankSets, steps, w))
}

// checkBlock compares block with setsGo on sets rows of n outputs at
// alignment align, with sentinels around and between the rows.
func checkBlock[F nd.Float](t *testing.T, what string, sets int, block func(out []F, outPitch, n int, src []F, steps []int, w []F), rng *rand.Rand, n, align int, src []F) {
	t.Helper()
	nsteps := rng.IntN(10)
	steps := make([]int, nsteps)
	for i := range steps {
		steps[i] = rng.IntN(len(src)-n+1)<<8 | rng.IntN(1<<sets)
	}
	w := randomValues[F](rng, sets*nsteps)
	pitch := n + guard
	size := guard + (sets-1)*pitch + n + guard
	buf := randomValues[F](rng, align+size)[align:]
	want := append([]F(nil), buf...)
	setsGo(sets, want[guard:], pitch, n, src, steps, w)
	block(buf[guard:], pitch, n, src, steps, w)
	for i := range buf {
		if !same(buf[i], want[i]) {
			t.Fatalf("%s, length %d, alignment %d, value %d of the rows and guards: %v, want %v", what, n, align, i, buf[i], want[i])
		}
	}
}

// randomValues returns values over many binades, with occasional zeros,
// infinities, subnormals and near-cancelling pairs, so that the rounding of
// every fused multiply-add is exercised.
func randomValues[F nd.Float](rng *rand.Rand, n int) []F {
	s := make([]F, n)
	for i := range s {
		switch r := rng.IntN(40); {
		case r == 0:
			s[i] = 0
		case r == 1:
			s[i] = F(math.Inf(1 - 2*rng.IntN(2)))
		case r == 2:
			s[i] = F(math.SmallestNonzeroFloat32 * float64(rng.IntN(1000)))
		case r < 8 && i > 0:
			s[i] = -s[i-1] * F(1+rng.Float64()*1e-6)
		default:
			s[i] = F((rng.Float64()*2 - 1) * math.Ldexp(1, rng.IntN(40)-20))
		}
	}
	return s
}

// same is bitwise equality, any NaN equal to any other (payloads differ
// between hardware and software).
func same[F nd.Float](a, b F) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b))
}

// TestTranspose8 compares Transpose8 with transpose8Go for every length
// 0..maxLength at alignments 0–3, with the values between the rows' runs
// in dst (stride > 8) and around them left alone.
func TestTranspose8(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	for align := 0; align < 4; align++ {
		for n := 0; n <= maxLength; n++ {
			stride, pitch := 8+rng.IntN(3)*8+rng.IntN(2), n+rng.IntN(4)
			src := randomValues[float32](rng, align+8*pitch+1)[align:]
			size := guard + n*stride + guard
			buf := randomValues[float32](rng, align+size)[align:]
			want := append([]float32(nil), buf...)
			transpose8Go(want[guard:], stride, src, pitch, n)
			Transpose8(buf[guard:], stride, src, pitch, n)
			for i := range buf {
				if !same(buf[i], want[i]) {
					t.Fatalf("length %d, stride %d, alignment %d, value %d: %v, want %v", n, stride, align, i, buf[i], want[i])
				}
			}
		}
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"offset":     func() { Taps(make([]float32, 4), make([]float32, 5), []int{2}, []float32{1}) },
		"negative":   func() { Taps(make([]float32, 4), make([]float32, 5), []int{-1}, []float32{1}) },
		"taps count": func() { Taps(make([]float32, 4), make([]float32, 5), []int{0, 1}, []float32{1}) },
		"row":        func() { Row(make([]float64, 4), make([]float64, 5), []float64{1, 2, 3}) },
		"axpy":       func() { Axpy(make([]float64, 4), make([]float64, 3), 1) },
		"block rows": func() {
			Block(make([]float32, 3*8+3), 8, 4, make([]float32, 8), NewSteps(BlockRows, []int{1}, make([]float32, BlockRows)))
		},
		"block step": func() {
			Block(make([]float32, 4*8), 8, 4, make([]float32, 8), NewSteps(BlockRows, []int{5<<8 | 1}, make([]float32, BlockRows)))
		},
		"steps":     func() { NewSteps(BlockRows, []int{1, 2}, make([]float32, BlockRows)) },
		"sets":      func() { NewSteps(3, []int{1}, make([]float32, 3)) },
		"transpose": func() { Transpose8(make([]float32, 8*3), 8, make([]float32, 8*4), 4, 4) },
		"bank rows": func() {
			Block(make([]float32, 7*8+3), 8, 4, make([]float32, 8), NewSteps(BankSets, []int{1}, make([]float32, BankSets)))
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestFMAPeak checks the count of multiply-adds (its speed is the bench's
// business).
func TestFMAPeak(t *testing.T) {
	one := FMAPeak(1)
	if one < 12 || FMAPeak(10) != 10*one || FMAPeak(0) != 0 {
		t.Errorf("FMAPeak: %d per round, %d for 10, %d for 0", one, FMAPeak(10), FMAPeak(0))
	}
}

// TestTranspose8Bounds runs Transpose8 with dst exactly as long as its
// runs need, (n−1)·stride + 8 values (a bank group's place in its output
// row, the last group ending where the row does), between sentinels that
// must not change, for every n 0..40, strides of 8 and more, pitches of n
// and more and dst and src at offsets 0–3, against transpose8Go; and the
// assembly loop alone where the CPU has it, for whole blocks of 8.
func TestTranspose8Bounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 6))
	impls := []struct {
		name string
		run  func(dst []float32, stride int, src []float32, pitch, n int)
		ok   func(n int) bool
	}{{"Transpose8 (" + ISA() + ")", Transpose8, func(int) bool { return true }}}
	if t8 := asmTranspose8(t.Logf); t8 != nil {
		impls = append(impls, struct {
			name string
			run  func(dst []float32, stride int, src []float32, pitch, n int)
			ok   func(n int) bool
		}{"transpose8AVX", t8, func(n int) bool { return n%8 == 0 }})
	}
	cases := 0
	for _, impl := range impls {
		for n := 0; n <= 40; n++ {
			if !impl.ok(n) {
				continue
			}
			for _, stride := range []int{8, 9, 15, 16, 17, 24, 64} {
				for _, extra := range []int{0, 1, 7, 8} {
					for off := 0; off < 4; off++ {
						pitch := n + extra
						src := randomValues[float32](rng, off+7*pitch+n)[off:]
						size := 0
						if n > 0 {
							size = (n-1)*stride + 8
						}
						buf := randomValues[float32](rng, off+guard+size+guard)[off:]
						want := append([]float32(nil), buf...)
						transpose8Go(want[guard:guard+size], stride, src, pitch, n)
						impl.run(buf[guard:guard+size:guard+size], stride, src, pitch, n)
						for i := range buf {
							if !same(buf[i], want[i]) {
								t.Fatalf("%s: n %d, stride %d, pitch %d, offset %d, value %d of dst and its guards: %v, want %v", impl.name, n, stride, pitch, off, i-guard, buf[i], want[i])
							}
						}
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestChooseISA checks EnvISA's rule on every CPU: the widest instruction
// set the CPU has no wider than the value, any case; the widest there is
// for an unset or unknown value.
func TestChooseISA(t *testing.T) {
	for _, c := range []struct {
		env          string
		has512, has2 bool
		want         string
	}{
		{"", true, true, ISAAVX512},
		{"avx512", true, true, ISAAVX512},
		{"AVX2", true, true, ISAAVX2},
		{" avx2 ", true, true, ISAAVX2},
		{"go", true, true, ISAGo},
		{"Go", false, true, ISAGo},
		{"avx512", false, true, ISAAVX2},
		{"avx512", false, false, ISAGo},
		{"avx2", false, false, ISAGo},
		{"avx2", true, false, ISAGo},
		{"", false, true, ISAAVX2},
		{"", false, false, ISAGo},
		{"sse", true, true, ISAAVX512},
		{"avx-512", false, true, ISAAVX2},
		{"noasm", false, true, ISAAVX2},
	} {
		if got := chooseISA(c.env, c.has512, c.has2); got != c.want {
			t.Errorf("%s=%q with AVX-512 %v, AVX2 %v: %s, want %s", EnvISA, c.env, c.has512, c.has2, got, c.want)
		}
	}
}
