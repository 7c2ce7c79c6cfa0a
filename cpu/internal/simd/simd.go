package simd

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/ndconv/ndconv/nd"
)

// Taps adds taps to every accumulator: for each x < len(acc), in order of
// t, acc[x] = fma(w[t], src[offs[t]+x], acc[x]). It panics unless len(offs)
// = len(w) and every offs[t] + len(acc) ≤ len(src) with offs[t] ≥ 0.
func Taps[F nd.Float](acc, src []F, offs []int, w []F) {
	checkTaps(len(acc), len(src), offs, len(w))
	if len(acc) == 0 || len(w) == 0 {
		return
	}
	if is32[F]() {
		taps32(f32s(acc), f32s(src), offs, f32s(w))
	} else {
		taps64(f64s(acc), f64s(src), offs, f64s(w))
	}
}

// SetTaps is Taps with every accumulator starting from +0 instead of its
// value: acc[x] = fma(w[last], …, fma(w[0], src[offs[0]+x], +0)).
func SetTaps[F nd.Float](acc, src []F, offs []int, w []F) {
	checkTaps(len(acc), len(src), offs, len(w))
	if len(acc) == 0 {
		return
	}
	if is32[F]() {
		setTaps32(f32s(acc), f32s(src), offs, f32s(w))
	} else {
		setTaps64(f64s(acc), f64s(src), offs, f64s(w))
	}
}

// BlockRows is the number of output rows Block computes at once with
// steps prepared for them, and BankSets the number of accumulator sets it
// computes at once with steps prepared for a bank (its kernels, or its
// kernels × a few rows).
const BlockRows, BankSets = 4, 8

// Steps is a prepared list of Block's steps for sets accumulator sets
// (BlockRows or BankSets): step s loads the source vectors at
// src[steps[s]>>8 + x] and adds them, weighted by w[s·sets+i], to every
// set i whose bit is set in steps[s]&0xff.
type Steps[F nd.Float] struct {
	sets  int
	steps []int
	w     []F
	reach int // the largest source offset of a step
	// offs and setW are the steps as one tap list per set, for the
	// pure-Go twin (blockTwin).
	offs [][]int
	setW [][]F
	// prog is a row block's steps as runs (runsProgram), for the AVX2
	// and AVX-512 row-block loops; nil for a bank's sets.
	prog []uint64
	// d3 is a row block's dense 3×3 kernel, for the loop that holds its
	// weights in registers; nil for other steps.
	d3 *dense3Steps[F]
}

// NewSteps prepares steps and their weights for Block over sets
// accumulator sets. It panics unless sets is BlockRows or BankSets,
// len(w) = sets·len(steps) and no step is negative.
func NewSteps[F nd.Float](sets int, steps []int, w []F) *Steps[F] {
	if sets != BlockRows && sets != BankSets {
		panic(fmt.Sprintf("simd: block steps for %d sets", sets))
	}
	if len(w) != sets*len(steps) {
		panic(fmt.Sprintf("simd: %d weights for %d block steps of %d sets", len(w), len(steps), sets))
	}
	s := &Steps[F]{sets: sets, steps: steps, w: w}
	for _, st := range steps {
		if st < 0 {
			panic(fmt.Sprintf("simd: negative block step %d", st))
		}
		s.reach = max(s.reach, st>>8)
	}
	s.setLists()
	if sets == BlockRows {
		s.prog = runsProgram(steps, w, sets)
		s.d3 = findDense3(steps, w)
	}
	return s
}

// Sets is the number of accumulator sets st was prepared for.
func (st *Steps[F]) Sets() int { return st.sets }

// Block is SetTaps for st.Sets() sets of outputs at once, set i being
// out[i·outPitch:][:n], each source vector loaded once for every set that
// uses it (register blocking): output rows, or a bank's kernels. Each set
// takes the taps of st in step order, from +0. out and src must not
// overlap: the loops read src as they write out, and may write an output
// more than once (with the same value). It panics unless the sets lie in
// out and every step's source run lies in src.
func Block[F nd.Float](out []F, outPitch, n int, src []F, st *Steps[F]) {
	if n < 0 || outPitch < n || (st.sets-1)*outPitch+n > len(out) {
		panic(fmt.Sprintf("simd: block of %d sets of %d at pitch %d in %d values", st.sets, n, outPitch, len(out)))
	}
	if len(st.steps) > 0 && st.reach > len(src)-n {
		panic(fmt.Sprintf("simd: block step at %d out of a source of %d for %d outputs", st.reach, len(src), n))
	}
	if n == 0 {
		return
	}
	switch {
	case blockBySets && is32[F]():
		blockTwin32(f32s(out), outPitch, n, f32s(src), st.offs, f32s2(st.setW))
	case blockBySets:
		blockSets(f64s(out), outPitch, n, f64s(src), st.sets, st.offs, f64s2(st.setW), setTapsTwinF64)
	case st.d3 != nil && is32[F]() && dense3F32 != nil:
		dense3F32(f32s(out), outPitch, n, f32s(src[st.d3.base:]), st.d3.pitch, f32s(st.d3.w[:]))
	case st.d3 != nil && !is32[F]() && dense3F64 != nil:
		dense3F64(f64s(out), outPitch, n, f64s(src[st.d3.base:]), st.d3.pitch, f64s(st.d3.w[:]))
	case is32[F]() && blockRuns32 != nil && st.sets == BlockRows:
		blockRuns32(f32s(out), outPitch, n, f32s(src), st.steps, f32s(st.w), st.prog)
	case blockRuns64 != nil && !is32[F]() && st.sets == BlockRows:
		blockRuns64(f64s(out), outPitch, n, f64s(src), st.steps, f64s(st.w), st.prog)
	case is32[F]() && st.sets == BankSets:
		bank32(f32s(out), outPitch, n, f32s(src), st.steps, f32s(st.w))
	case is32[F]():
		block32(f32s(out), outPitch, n, f32s(src), st.steps, f32s(st.w))
	case st.sets == BankSets:
		bank64(f64s(out), outPitch, n, f64s(src), st.steps, f64s(st.w))
	default:
		block64(f64s(out), outPitch, n, f64s(src), st.steps, f64s(st.w))
	}
}

// Row adds a dense row of taps to every accumulator: for each x < len(acc),
// in order of j, acc[x] = fma(w[j], src[x+j], acc[x]). It panics unless
// len(src) ≥ len(acc) + len(w) − 1.
func Row[F nd.Float](acc, src, w []F) {
	if len(acc) == 0 || len(w) == 0 {
		return
	}
	if len(src) < len(acc)+len(w)-1 {
		panic(fmt.Sprintf("simd: a source of %d for %d outputs of %d taps", len(src), len(acc), len(w)))
	}
	if is32[F]() {
		row32(f32s(acc), f32s(src), f32s(w))
	} else {
		row64(f64s(acc), f64s(src), f64s(w))
	}
}

// Axpy adds a·x to y: y[i] = fma(a, x[i], y[i]) for each i < len(y). It
// panics if len(x) < len(y).
func Axpy[F nd.Float](y, x []F, a F) {
	if len(x) < len(y) {
		panic(fmt.Sprintf("simd: axpy of %d values into %d", len(x), len(y)))
	}
	if len(y) == 0 {
		return
	}
	if is32[F]() {
		axpy32(f32s(y), f32s(x), float32(a))
	} else {
		axpy64(f64s(y), f64s(x), float64(a))
	}
}

// Transpose8 interleaves 8 rows of n float32s into dst:
// dst[x·stride+i] = src[i·pitch+x] for i < 8 and x < n, which is how a
// bank's accumulator sets are stored in the output's kernel-fastest
// layout. It panics unless 8 ≤ stride, n ≤ pitch and the runs lie in dst
// and src.
func Transpose8(dst []float32, stride int, src []float32, pitch, n int) {
	if n <= 0 {
		return
	}
	if stride < 8 || pitch < n || (n-1)*stride+8 > len(dst) || 7*pitch+n > len(src) {
		panic(fmt.Sprintf("simd: transpose of 8 rows of %d at pitch %d (%d values) into stride %d (%d values)", n, pitch, len(src), stride, len(dst)))
	}
	whole := n &^ 7
	transpose8(dst, stride, src, pitch, whole)
	// The tail's runs start at dst[whole·stride], which lies past the end
	// of a dst that ends with the last run (its length (n−1)·stride + 8,
	// stride > 8) when there is no tail.
	if whole < n {
		transpose8Go(dst[whole*stride:], stride, src[whole:], pitch, n-whole)
	}
}

// LoadUint8 widens src into dst: dst[i] = float32(src[i]), exactly. It
// panics if len(src) < len(dst).
func LoadUint8(dst []float32, src []uint8) { loadUint8(dst, src[:len(dst)]) }

// LoadUint16 is LoadUint8 for uint16 samples.
func LoadUint16(dst []float32, src []uint16) { loadUint16(dst, src[:len(dst)]) }

// StoreUint8 narrows src into dst with the rule of nd.Round: round half to
// even, saturate to [0, 255], NaN to 0. It panics if len(src) < len(dst).
func StoreUint8(dst []uint8, src []float32) { storeUint8(dst, src[:len(dst)]) }

// StoreUint16 is StoreUint8 for uint16 samples, saturating to [0, 65535].
func StoreUint16(dst []uint16, src []float32) { storeUint16(dst, src[:len(dst)]) }

// EnvISA is the environment variable that caps the instruction set of the
// loops, read once when the program starts: avx512, avx2 or go (the
// pure-Go twins), in any case; on arm64 go, else NEON. The loops run the widest instruction set
// that the build and the CPU have and the variable allows, so a value
// naming one the CPU lacks falls back to the widest below it (never an
// illegal instruction); unset, empty or any other value is the default,
// the widest there is. Every choice gives the same bits; it is there so
// that each path can be tested on any machine.
const EnvISA = "NDCONV_SIMD"

// The instruction sets of the loops, as ISA names them and EnvISA takes
// them, narrowest first.
const (
	ISAGo     = "go"
	ISAAVX2   = "avx2"
	ISAAVX512 = "avx512"
	ISANEON   = "neon" // arm64's Advanced SIMD; EnvISA=go is its only cap
)

// ISA names the instruction set of the loops in use: ISAAVX512, ISAAVX2,
// ISANEON or ISAGo.
func ISA() string { return isa }

// isa is the instruction set in use; init sets it where the build has
// assembly (simd_amd64.go).
var isa = ISAGo

// chooseISA returns the instruction set to run, given EnvISA's value and
// whether the CPU has AVX-512 (has512) and AVX2 with FMA (has2): the
// widest the CPU has that is no wider than the value names, the widest of
// all for an unknown value.
func chooseISA(env string, has512, has2 bool) string {
	levels := []string{ISAGo, ISAAVX2, ISAAVX512}
	has := []bool{true, has2, has512}
	limit := slices.Index(levels, strings.ToLower(strings.TrimSpace(env)))
	if limit < 0 {
		limit = len(levels) - 1
	}
	for l := limit; ; l-- {
		if has[l] {
			return levels[l]
		}
	}
}

// The loops in use: the pure-Go twins (twin.go), replaced at init by
// assembly where the build and the CPU have it and EnvISA allows it
// (simd_amd64.go) or NEON (simd_arm64.go). Block runs the twin's SetTaps
// set by set on its prepared per-set tap lists while blockBySets is set
// (no assembly), block32 … bank64 otherwise.
var (
	taps32, setTaps32 = tapsTwinF32, setTapsTwinF32
	taps64, setTaps64 = tapsTwinF64, setTapsTwinF64
	row32, row64      = rowTwin32, rowTwin64
	block32, block64  = blockGo[float32], blockGo[float64]
	bank32, bank64    = bankGo[float32], bankGo[float64]
	blockBySets       = true
	axpy32, axpy64    = axpyTwin32, axpyTwin64
	loadUint8         = loadUint8Go
	loadUint16        = loadUint16Go
	storeUint8        = storeUint8Sat
	storeUint16       = storeUint16Sat
	fmaPeak           = fmaPeakGo
	transpose8        = transpose8Go
	// blockRuns32 and blockRuns64, where set (AVX2, AVX-512), run a row block
	// (BlockRows sets) from its steps' program (Steps.prog) instead of
	// block32 and block64.
	blockRuns32 func(out []float32, outPitch, n int, src []float32, steps []int, w []float32, prog []uint64)
	blockRuns64 func(out []float64, outPitch, n int, src []float64, steps []int, w []float64, prog []uint64)
)

// FMAPeak runs rounds of independent float32 multiply-add chains in the
// widest vectors this build and CPU use, with nothing loaded or stored,
// and returns the number of multiply-adds done: the arithmetic peak of the
// loops above, for the roofline.
func FMAPeak(rounds int) int64 { return fmaPeak(max(rounds, 0)) }

// fmaPeakGo is FMAPeak in scalar Go: 12 chains, enough to hide the latency.
func fmaPeakGo(rounds int) int64 {
	const m, c = 0.9999, 0.0001
	var a [12]float32
	for i := range a {
		a[i] = float32(i)
	}
	for range rounds {
		for i := range a {
			a[i] = a[i]*m + c
		}
	}
	peakSink = a[0]
	return int64(rounds) * int64(len(a))
}

// peakSink keeps the scalar chains from being optimised away.
var peakSink float32

func checkTaps(n, srcLen int, offs []int, taps int) {
	if len(offs) != taps {
		panic(fmt.Sprintf("simd: %d offsets for %d taps", len(offs), taps))
	}
	for _, o := range offs {
		if o < 0 || o > srcLen-n {
			panic(fmt.Sprintf("simd: tap offset %d out of a source of %d for %d outputs", o, srcLen, n))
		}
	}
}

func is32[F nd.Float]() bool {
	var f F
	return unsafe.Sizeof(f) == 4
}

// f32s and f64s view a []F as the slice it is, for the F at hand.
func f32s[F nd.Float](s []F) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func f64s[F nd.Float](s []F) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// tapsGo is the reference loop of Taps:
//
//	for x := range acc {
//		for t := range w {
//			acc[x] = nd.FMA(w[t], src[offs[t]+x], acc[x])
//		}
//	}
//
// It runs tap by tap over the whole row (each output still takes its taps
// in order), so its inner loop is axpyGo's.
func tapsGo[F nd.Float](acc, src []F, offs []int, w []F) {
	for t, wt := range w {
		axpyGo(acc, src[offs[t]:], wt)
	}
}

// setTapsGo is the reference loop of SetTaps:
//
//	for x := range acc {
//		acc[x] = 0
//		for t := range w {
//			acc[x] = nd.FMA(w[t], src[offs[t]+x], acc[x])
//		}
//	}
func setTapsGo[F nd.Float](acc, src []F, offs []int, w []F) {
	clear(acc)
	tapsGo(acc, src, offs, w)
}

// blockGo is the reference loop of Block for BlockRows sets, and bankGo
// for BankSets; setsGo is both, for any number of sets:
//
//	for i := range sets {
//		clear(out[i*outPitch:][:n])
//	}
//	for s, st := range steps {
//		for i := range sets {
//			if st>>i&1 != 0 {
//				for x := range n {
//					out[i*outPitch+x] = nd.FMA(w[s*sets+i], src[st>>8+x], out[i*outPitch+x])
//				}
//			}
//		}
//	}
func setsGo[F nd.Float](sets int, out []F, outPitch, n int, src []F, steps []int, w []F) {
	for i := range sets {
		clear(out[i*outPitch:][:n])
	}
	for s, st := range steps {
		for i := range sets {
			if st>>i&1 != 0 {
				axpyGo(out[i*outPitch:][:n], src[st>>8:], w[s*sets+i])
			}
		}
	}
}

func blockGo[F nd.Float](out []F, outPitch, n int, src []F, steps []int, w []F) {
	setsGo(BlockRows, out, outPitch, n, src, steps, w)
}

func bankGo[F nd.Float](out []F, outPitch, n int, src []F, steps []int, w []F) {
	setsGo(BankSets, out, outPitch, n, src, steps, w)
}

// rowGo is the reference loop of Row:
//
//	for x := range acc {
//		for j := range w {
//			acc[x] = nd.FMA(w[j], src[x+j], acc[x])
//		}
//	}
func rowGo[F nd.Float](acc, src, w []F) {
	for j, wj := range w {
		axpyGo(acc, src[j:], wj)
	}
}

// axpyGo is the reference loop of Axpy:
//
//	for i := range y {
//		y[i] = nd.FMA(a, x[i], y[i])
//	}
//
// The float32 loop takes nd.FMA32Fast inline and nd.FMA32 only where it
// declines; float64's math.FMA is a single instruction where the CPU has one.
func axpyGo[F nd.Float](y, x []F, a F) {
	if is32[F]() {
		axpy32Go(f32s(y), f32s(x), float32(a))
		return
	}
	y64, x64, a64 := f64s(y), f64s(x)[:len(y)], float64(a)
	for i, v := range x64 {
		y64[i] = math.FMA(a64, v, y64[i])
	}
}

func axpy32Go(y, x []float32, a float32) {
	x = x[:len(y)]
	for i, v := range x {
		r, ok := nd.FMA32Fast(a, v, y[i])
		if !ok {
			r = nd.FMA32(a, v, y[i])
		}
		y[i] = r
	}
}

// transpose8Go is the reference loop of Transpose8:
//
//	for x := range n {
//		for i := range 8 {
//			dst[x*stride+i] = src[i*pitch+x]
//		}
//	}
func transpose8Go(dst []float32, stride int, src []float32, pitch, n int) {
	for x := range n {
		out := dst[x*stride:][:8]
		for i := range out {
			out[i] = src[i*pitch+x]
		}
	}
}

// loadGo is the reference loop of LoadUint8 and LoadUint16:
//
//	for i := range dst {
//		dst[i] = float32(src[i])
//	}
func loadGo[T uint8 | uint16](dst []float32, src []T) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = float32(src[i])
	}
}

// storeGo is the reference loop of StoreUint8 and StoreUint16:
//
//	for i := range dst {
//		dst[i] = T(nd.Round(float64(src[i]), dt))
//	}
func storeGo[T uint8 | uint16](dst []T, src []float32, dt nd.DType) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = T(nd.Round(float64(src[i]), dt))
	}
}

// storeSatGo is storeGo without nd.Round's general conversion, which
// allocates a one-value array per value: the loops in use where there is
// no assembly. v ≤ 0 and NaN give 0, v ≥ hi gives hi, and the rest round
// half to even, which is nd.Round's rule for T (TestConversions compares
// the two).
func storeSatGo[T uint8 | uint16](dst []T, src []float32, hi float32) {
	src = src[:len(dst)]
	for i, v := range src {
		switch {
		case !(v > 0):
			dst[i] = 0
		case v >= hi:
			dst[i] = T(hi)
		default:
			dst[i] = T(math.RoundToEven(float64(v)))
		}
	}
}

func storeUint8Sat(dst []uint8, src []float32)   { storeSatGo(dst, src, 255) }
func storeUint16Sat(dst []uint16, src []float32) { storeSatGo(dst, src, 65535) }

func loadUint8Go(dst []float32, src []uint8)    { loadGo(dst, src) }
func loadUint16Go(dst []float32, src []uint16)  { loadGo(dst, src) }
func storeUint8Go(dst []uint8, src []float32)   { storeGo(dst, src, nd.Uint8) }
func storeUint16Go(dst []uint16, src []float32) { storeGo(dst, src, nd.Uint16) }
