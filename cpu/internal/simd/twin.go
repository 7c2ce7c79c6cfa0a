package simd

import (
	"math"
	"unsafe"

	"github.com/ndconv/ndconv/nd"
)

// The fast pure-Go twins: the loops in use where there is no assembly
// (other architectures, the noasm tag, NDCONV_SIMD=go). They give the bits
// of the reference loops (tapsGo, rowGo, setsGo, axpyGo), which stay as
// the definitions the tests compare with, but run output-fastest in
// registers: twinWidth outputs at a time, each taking all its taps (in
// order) before the next group, with the accumulators held in float64
// registers between taps instead of loaded and stored per tap, and the
// float32 fused multiply-add computed as fma32 does.

// twinWidth is the number of outputs a twin loop computes at once: enough
// independent chains to hide the latency of one multiply-add (multiply,
// add, the rounding to float32 and back, about 16 cycles) behind the
// others, few enough to stay in registers.
const twinWidth = 8

// The float32 fused multiply-add of the twins: for a weight w and an
// accumulator a, float32 values held in float64, s := w*float64(x) + a is
// computed in float64, where the product is exact (48 of 53 bits), so s
// rounded to float32 is the correctly rounded a + w·x unless s sits exactly
// on a float32 midpoint (float64 rounding can move an inexact sum onto one
// but never across one) or lies below float32's normal range, where
// float32 rounds at another bit (nd.FMA32's argument). careful reports
// those rare sums; a loop notes them, keeps going, and then computes its
// outputs again with nd.FMA32 (redo), which keeps calls, and the register
// spills around them, out of the loop.

// careful reports whether float32(s) may not be the correct rounding of
// the exact sum s rounds: s is a float32 midpoint (its low 29 bits
// 1000…0), or a nonzero value below 2⁻¹²⁶. Zero sums are exact (a float64
// sum of zero has lost nothing) and common (zero padding, zero data), so
// they do not count.
func careful(s float64) bool {
	b := math.Float64bits(s)
	return b&(1<<29-1) == 1<<28 || b<<1-1 < tinyBits<<1-1
}

// tinyBits is the bits of 2⁻¹²⁶, float32's smallest normal value.
const tinyBits = (1023 - 126) << 52

// fma32 is nd.FMA32(float32(w), x, float32(a)) in float64, the loops' rare
// case.
func fma32(w float64, x float32, a float64) float64 {
	s := w*float64(x) + a
	if careful(s) {
		return float64(nd.FMA32(float32(w), x, float32(a)))
	}
	return float64(float32(s))
}

// redo32 computes acc[x] for x in [lo, hi) again, one fused multiply-add
// at a time through fma32: what a twin loop does where careful saw a sum.
func redo32(acc, src []float32, lo, hi int, offs []int, w []float32, set bool) {
	for x := lo; x < hi; x++ {
		var a float64
		if !set {
			a = float64(acc[x])
		}
		for t, o := range offs {
			a = fma32(float64(w[t]), src[o+x], a)
		}
		acc[x] = float32(a)
	}
}

// tapsTwin32 is tapsGo for float32 (set: setTapsGo): each group of
// twinWidth outputs starts from acc (from +0) and takes every tap in order
// (groupNormal, or group32 where normalProducts fails); a group where
// careful saw a sum is computed again (redo32).
func tapsTwin32(acc, src []float32, offs []int, w []float32, set bool) {
	n := len(acc)
	w = w[:len(offs)]
	normal := n >= twinWidth && normalProducts(src, n, offs, w)
	runGroups(acc, src, offs, w, normal, set)
}

// runGroups is tapsTwin32 with normalProducts' answer given.
func runGroups(acc, src []float32, offs []int, w []float32, normal, set bool) {
	n := len(acc)
	x := 0
	for ; x+twinWidth <= n; x += twinWidth {
		out := (*[twinWidth]float32)(acc[x:])
		var a [twinWidth]float64
		if !set {
			for i, v := range out {
				a[i] = float64(v)
			}
		}
		// checkTaps has bounded every offs[t]+n by len(src).
		var ok bool
		if normal {
			ok = groupNormal(&a, unsafe.Pointer(&src[x]), offs, w)
		} else {
			ok = group32(&a, unsafe.Pointer(&src[x]), offs, w)
		}
		if !ok {
			redo32(acc, src, x, x+twinWidth, offs, w, set)
			continue
		}
		for i := range out {
			out[i] = float32(a[i])
		}
	}
	redo32(acc, src, x, n, offs, w, set)
}

// blockTwin32 is the twin's Block for float32: setsGo on the per-set tap
// lists of Steps (offs, w), each set a SetTaps, with normalProducts' scan
// done once for all sets, over the source run any of them reads.
func blockTwin32(out []float32, outPitch, n int, src []float32, offs [][]int, w [][]float32) {
	lo, hi := math.MaxInt, math.MinInt
	for _, o := range offs {
		if len(o) > 0 {
			l, h := offsRange(o)
			lo, hi = min(lo, l), max(hi, h)
		}
	}
	minX := uint32(math.MaxUint32)
	if n >= twinWidth && lo <= hi {
		minX = minMagnitudeBits(src[lo : hi+n])
	}
	for i, o := range offs {
		wi := w[i][:len(o)]
		normal := n >= twinWidth && normalBound(minWeightBits(wi), minX)
		runGroups(out[i*outPitch:][:n], src, o, wi, normal, true)
	}
}

// normalProducts reports whether every nonzero product of a weight and a
// source value the taps read (src[offs[t] … offs[t]+n)) is at least 2⁻¹²⁹
// in magnitude, so that no sum careful flags for being below 2⁻¹²⁶ can be
// inexact, and groupNormal may leave that test out. Why: the exact sum e
// of a float32 a and p = w·x is a multiple of L = min(2⁻¹⁴⁹, lsb(w)·lsb(x));
// if |e| < 2⁻¹²⁵ and L ≥ 2⁻¹⁷⁷ it has under 53 significant bits and the
// float64 sum is exact, and float32 of an exact sum is correctly rounded.
// So an inexact sum that small needs lsb(w)·lsb(x) < 2⁻¹⁷⁷, and as every
// float32 is below 2²⁴ of its last bit, |p| < 2⁴⁸·2⁻¹⁷⁷ = 2⁻¹²⁹. Zero
// products leave a unchanged (exact), NaNs give NaN either way. The scan
// reads each source value once per call, against len(offs) multiply-adds
// per output.
func normalProducts(src []float32, n int, offs []int, w []float32) bool {
	if len(offs) == 0 {
		return true
	}
	lo, hi := offsRange(offs)
	return normalBound(minWeightBits(w[:len(offs)]), minMagnitudeBits(src[lo:hi+n]))
}

// offsRange is the smallest and the largest of offs (not empty).
func offsRange(offs []int) (lo, hi int) {
	lo, hi = offs[0], offs[0]
	for _, o := range offs[1:] {
		lo, hi = min(lo, o), max(hi, o)
	}
	return lo, hi
}

// minMagnitudeBits is the bits of the smallest nonzero magnitude in src
// less one, math.MaxUint32 where every value is zero: magnitudes order as
// their bits do, and a zero is skipped by b−1 wrapping around. Four values
// per iteration in two chains of minima; not inlined, as inside its
// callers the compiler kept the minimum on the stack (a store-to-load
// chain of about five cycles per value).
//
//go:noinline
func minMagnitudeBits(src []float32) uint32 {
	m0, m1 := uint32(math.MaxUint32), uint32(math.MaxUint32)
	i := 0
	for ; i+4 <= len(src); i += 4 {
		b := (*[4]uint32)(unsafe.Pointer(&src[i]))
		m0 = min(m0, b[0]&^(1<<31)-1, b[1]&^(1<<31)-1)
		m1 = min(m1, b[2]&^(1<<31)-1, b[3]&^(1<<31)-1)
	}
	for _, v := range src[i:] {
		m0 = min(m0, math.Float32bits(v)&^(1<<31)-1)
	}
	return min(m0, m1)
}

// minWeightBits is the bits of the smallest nonzero magnitude in w,
// math.MaxUint32 where every weight is zero.
func minWeightBits(w []float32) uint32 {
	minW := uint32(math.MaxUint32)
	for _, v := range w {
		if b := math.Float32bits(v) &^ (1 << 31); b != 0 {
			minW = min(minW, b)
		}
	}
	return minW
}

// normalBound is normalProducts' test on the smallest nonzero weight
// (minWeightBits) and the smallest nonzero source value (minMagnitudeBits:
// its bits less one): every nonzero product is at least 2⁻¹²⁹.
func normalBound(minW, minX uint32) bool {
	if minW == math.MaxUint32 || minX == math.MaxUint32 {
		return true // every weight or every value is zero
	}
	return float64(math.Float32frombits(minW))*float64(math.Float32frombits(minX+1)) >= 0x1p-129
}

// group32Normal is group32 where normalProducts holds, on architectures
// without overlapStores (elsewhere group32Mid runs): only the midpoint
// test, as the low 29 bits shifted to the top (1000…0 there is 1<<31 of a
// uint32), its minima in two chains of four so the loop carries short
// dependencies.
func group32Normal(a *[twinWidth]float64, p unsafe.Pointer, offs []int, w []float32) bool {
	mid0, mid1 := uint32(math.MaxUint32), uint32(math.MaxUint32)
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	w = w[:len(offs)]
	for t, o := range offs {
		wt := float64(w[t])
		v := (*[twinWidth]float32)(unsafe.Add(p, o*4))
		s0 := wt*float64(v[0]) + a0
		s1 := wt*float64(v[1]) + a1
		s2 := wt*float64(v[2]) + a2
		s3 := wt*float64(v[3]) + a3
		s4 := wt*float64(v[4]) + a4
		s5 := wt*float64(v[5]) + a5
		s6 := wt*float64(v[6]) + a6
		s7 := wt*float64(v[7]) + a7
		mid0 = min(mid0, uint32(math.Float64bits(s0))<<3^1<<31, uint32(math.Float64bits(s1))<<3^1<<31)
		mid1 = min(mid1, uint32(math.Float64bits(s4))<<3^1<<31, uint32(math.Float64bits(s5))<<3^1<<31)
		mid0 = min(mid0, uint32(math.Float64bits(s2))<<3^1<<31, uint32(math.Float64bits(s3))<<3^1<<31)
		mid1 = min(mid1, uint32(math.Float64bits(s6))<<3^1<<31, uint32(math.Float64bits(s7))<<3^1<<31)
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))
	}
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a0, a1, a2, a3, a4, a5, a6, a7
	return mid0 != 0 && mid1 != 0
}

// group32 applies the taps to twinWidth accumulators a, the outputs at p,
// p+1, …: a[i] = fma(w[t], p[offs[t]+i], a[i]) in order of t, each rounded
// to float32 (held in float64). It reports false where careful would have
// seen a sum: its two tests are kept as minima over every sum (the low 29
// bits xor 1000…0, 0 at a float32 midpoint; the bits doubled less one,
// under tinyBits<<1 − 1 for a nonzero sum below 2⁻¹²⁶), in trees that
// cost no branches and add little to the loop's carried chains. The
// caller guarantees that every p[offs[t]+twinWidth−1] lies in its source.
func group32(a *[twinWidth]float64, p unsafe.Pointer, offs []int, w []float32) bool {
	const m, h = 1<<29 - 1, 1 << 28
	mid, tiny := uint64(math.MaxUint64), uint64(math.MaxUint64)
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	w = w[:len(offs)]
	for t, o := range offs {
		wt := float64(w[t])
		v := (*[twinWidth]float32)(unsafe.Add(p, o*4))
		s0 := wt*float64(v[0]) + a0
		s1 := wt*float64(v[1]) + a1
		s2 := wt*float64(v[2]) + a2
		s3 := wt*float64(v[3]) + a3
		s4 := wt*float64(v[4]) + a4
		s5 := wt*float64(v[5]) + a5
		s6 := wt*float64(v[6]) + a6
		s7 := wt*float64(v[7]) + a7
		b0, b1, b2, b3 := math.Float64bits(s0), math.Float64bits(s1), math.Float64bits(s2), math.Float64bits(s3)
		b4, b5, b6, b7 := math.Float64bits(s4), math.Float64bits(s5), math.Float64bits(s6), math.Float64bits(s7)
		mid = min(mid, min(min(b0&m^h, b1&m^h), min(b2&m^h, b3&m^h)), min(min(b4&m^h, b5&m^h), min(b6&m^h, b7&m^h)))
		tiny = min(tiny, min(min(b0<<1-1, b1<<1-1), min(b2<<1-1, b3<<1-1)), min(min(b4<<1-1, b5<<1-1), min(b6<<1-1, b7<<1-1)))
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))
	}
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a0, a1, a2, a3, a4, a5, a6, a7
	return mid != 0 && tiny >= tinyBits<<1-1
}

// tapsTwin64 is tapsTwin32 for float64, whose fused multiply-add is
// math.FMA (one instruction where the CPU has one).
func tapsTwin64(acc, src []float64, offs []int, w []float64, set bool) {
	n := len(acc)
	x := 0
	for ; x+4 <= n; x += 4 {
		var a0, a1, a2, a3 float64
		if !set {
			a := acc[x : x+4 : x+4]
			a0, a1, a2, a3 = a[0], a[1], a[2], a[3]
		}
		for t, o := range offs {
			wt := w[t]
			v := src[o+x : o+x+4 : o+x+4]
			a0 = math.FMA(wt, v[0], a0)
			a1 = math.FMA(wt, v[1], a1)
			a2 = math.FMA(wt, v[2], a2)
			a3 = math.FMA(wt, v[3], a3)
		}
		a := acc[x : x+4 : x+4]
		a[0], a[1], a[2], a[3] = a0, a1, a2, a3
	}
	for ; x < n; x++ {
		var a0 float64
		if !set {
			a0 = acc[x]
		}
		for t, o := range offs {
			a0 = math.FMA(w[t], src[o+x], a0)
		}
		acc[x] = a0
	}
}

// rowTwin32 is rowGo for float32: tapsTwin32 with tap j at offset j
// (Row has bounded len(acc)+len(w)−1 by len(src)), or the reference loop
// for a row longer than rowOffs.
func rowTwin32(acc, src, w []float32) {
	if len(w) > len(rowOffs) {
		rowGo(acc, src, w)
		return
	}
	tapsTwin32(acc, src, rowOffs[:len(w)], w, false)
}

// rowOffs is 0, 1, 2, …: the offsets of a dense row's taps.
var rowOffs = func() []int {
	s := make([]int, 4096)
	for i := range s {
		s[i] = i
	}
	return s
}()

func rowTwin64(acc, src, w []float64) {
	n := len(acc)
	x := 0
	for ; x+4 <= n; x += 4 {
		a := acc[x : x+4 : x+4]
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		v := src[x : x+len(w)+3]
		for j, wj := range w {
			u := v[j : j+4 : j+4]
			a0 = math.FMA(wj, u[0], a0)
			a1 = math.FMA(wj, u[1], a1)
			a2 = math.FMA(wj, u[2], a2)
			a3 = math.FMA(wj, u[3], a3)
		}
		a[0], a[1], a[2], a[3] = a0, a1, a2, a3
	}
	for ; x < n; x++ {
		a0 := acc[x]
		v := src[x : x+len(w)]
		for j, wj := range w {
			a0 = math.FMA(wj, v[j], a0)
		}
		acc[x] = a0
	}
}

// axpyTwin32 is axpyGo for float32 through fma32.
func axpyTwin32(y, x []float32, a float32) {
	x = x[:len(y)]
	wa := float64(a)
	for i, v := range x {
		y[i] = float32(fma32(wa, v, float64(y[i])))
	}
}

func axpyTwin64(y, x []float64, a float64) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] = math.FMA(a, v, y[i])
	}
}

func tapsTwinF32(acc, src []float32, offs []int, w []float32)    { tapsTwin32(acc, src, offs, w, false) }
func setTapsTwinF32(acc, src []float32, offs []int, w []float32) { tapsTwin32(acc, src, offs, w, true) }
func tapsTwinF64(acc, src []float64, offs []int, w []float64)    { tapsTwin64(acc, src, offs, w, false) }
func setTapsTwinF64(acc, src []float64, offs []int, w []float64) { tapsTwin64(acc, src, offs, w, true) }

// setLists prepares st's steps as one tap list per set (the offsets and
// weights of the steps that add to it, in step order), which is how the
// twin runs Block: set by set, each a SetTaps.
func (st *Steps[F]) setLists() {
	st.offs = make([][]int, st.sets)
	st.setW = make([][]F, st.sets)
	for s, step := range st.steps {
		for i := range st.sets {
			if step>>i&1 != 0 {
				st.offs[i] = append(st.offs[i], step>>8)
				st.setW[i] = append(st.setW[i], st.w[s*st.sets+i])
			}
		}
	}
}

// blockSets is setsGo on the per-set tap lists of Steps (offs, w), each
// set a SetTaps through setTaps: the twin's Block for float64 (float32's
// is blockTwin32).
func blockSets[F float32 | float64](out []F, outPitch, n int, src []F, sets int, offs [][]int, w [][]F, setTaps func(acc, src []F, offs []int, w []F)) {
	for i := range sets {
		setTaps(out[i*outPitch:][:n], src, offs[i], w[i])
	}
}

// f32s2 and f64s2 view a [][]F as the [][]float32 or [][]float64 it is.
func f32s2[F nd.Float](s [][]F) [][]float32 {
	return unsafe.Slice((*[]float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func f64s2[F nd.Float](s [][]F) [][]float64 {
	return unsafe.Slice((*[]float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// unsafePointer is the address of s's first value (tests).
func unsafePointer(s []float32) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
