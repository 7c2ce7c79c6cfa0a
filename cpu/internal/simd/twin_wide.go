package simd

import (
	"math"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The wide float32 twin: tapsTwin32 and blockTwin32 widen the source run
// that a call's taps read to float64 once, in the pass that also finds its
// smallest magnitude for normalProducts' test, and then run group64 on it:
// the same float64 operations as group32Normal, in the same order, so the
// same bits, with fewer instructions per fused multiply-add (measured in
// docs/perf/cpu-engine.md, "2026-11-27: the exact twin"):
//
//   - the source value is loaded as a float64 instead of loaded and widened
//     on every tap (a source value of a 7×7 kernel is read by 49 taps, of a
//     four-row Block by up to 196);
//   - the weights are float64 already (Steps keeps them so, per plan);
//   - careful's midpoint test takes five integer instructions for two sums
//     instead of four for one (mid8).

// wideTwin reports whether the architecture stores a float64 at any
// multiple of four bytes, and loads a uint64 from one, at full speed:
// group64 keeps its sums with overlapping stores (put8). Elsewhere (mips,
// riscv64, where a misaligned access may trap into the kernel) the float32
// twin stays narrow. A constant, so the other branch is compiled out.
const wideTwin = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" ||
	runtime.GOARCH == "ppc64le" || runtime.GOARCH == "ppc64" || runtime.GOARCH == "s390x" || runtime.GOARCH == "loong64"

// wideMax is the most source values a wide call widens at once (512 KiB of
// float64, about a core's second-level cache): longer runs go in chunks of
// outputs.
const wideMax = 1 << 16

// widePays reports whether widening the source pays for n outputs whose
// taps (taps of them over all sets) reach span values apart: the chunk of
// outputs must hold whole groups, and the values widened per chunk (its
// outputs plus the span) must be at most half its multiply-adds, as a
// widened value costs about two instructions (widen, store; the load and
// the scan for the smallest magnitude are paid on the narrow path too) and
// saves about one on each multiply-add that reads it.
func widePays(n, span, taps int) bool {
	m := wideChunk(n, span)
	return m >= twinWidth && 2*(span+m) <= m*taps
}

// wideChunk is the number of outputs a wide call computes per widened run:
// all n, or as many whole groups as fit in wideMax beside the span.
func wideChunk(n, span int) int {
	return min(n, max(wideMax-span, 0)&^(twinWidth-1))
}

// twinScratch is a wide call's float64 copies: the source run and the
// weights of a call that did not bring float64 ones.
type twinScratch struct {
	src []float64
	w   []float64
}

// twinPool holds the scratch of wide calls, so that a reused plan
// allocates nothing once each worker has had one.
var twinPool = sync.Pool{New: func() any { return new(twinScratch) }}

// offsRange is the smallest and the largest of offs (not empty).
func offsRange(offs []int) (lo, hi int) {
	lo, hi = offs[0], offs[0]
	for _, o := range offs[1:] {
		lo, hi = min(lo, o), max(hi, o)
	}
	return lo, hi
}

// widenWeights returns w as float64s, in buf's memory where it is long
// enough.
func widenWeights(buf []float64, w []float32) []float64 {
	if cap(buf) < len(w) {
		buf = make([]float64, len(w), max(len(w), 64))
	}
	buf = buf[:len(w)]
	for i, v := range w {
		buf[i] = float64(v)
	}
	return buf
}

// widen writes float64(src[i]) to dst[i] (exact) and returns the bits of
// the smallest nonzero magnitude in src less one, math.MaxUint32 where
// every value is zero (normalProducts' scan: magnitudes order as their
// bits do, and a zero is skipped by b−1 wrapping around).
func widen(dst []float64, src []float32) uint32 {
	dst = dst[:len(src)]
	minX := uint32(math.MaxUint32)
	for i, v := range src {
		dst[i] = float64(v)
		minX = min(minX, math.Float32bits(v)&^(1<<31)-1)
	}
	return minX
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
// (minWeightBits) and the smallest nonzero source value (widen's minX, its
// bits less one): every nonzero product is at least 2⁻¹²⁹.
func normalBound(minW, minX uint32) bool {
	if minW == math.MaxUint32 || minX == math.MaxUint32 {
		return true // every weight or every value is zero
	}
	return float64(math.Float32frombits(minW))*float64(math.Float32frombits(minX+1)) >= 0x1p-129
}

// wide32 is tapsTwin32 with the source widened chunk by chunk into sc.src:
// outputs [x0, x0+m) read src[lo+x0 : hi+x0+m), which is widened to
// sc.src[0 : hi−lo+m), so output x0+x takes tap t from
// sc.src[offs[t]−lo+x]. w64 is w as float64s.
func wide32(sc *twinScratch, acc []float32, n int, src []float32, offs []int, w []float32, w64 []float64, lo, hi int, set bool) {
	span := hi - lo
	chunk := wideChunk(n, span)
	if cap(sc.src) < span+chunk {
		sc.src = make([]float64, span+chunk)
	}
	minW := minWeightBits(w)
	for x0 := 0; x0 < n; x0 += chunk {
		m := min(chunk, n-x0)
		buf := sc.src[:span+m]
		minX := widen(buf, src[lo+x0:hi+x0+m])
		runWide(acc, src, x0, m, buf, offs, lo, w, w64, normalBound(minW, minX), set)
	}
}

// runWide computes outputs [x0, x0+m) of acc (from +0 where set) in groups
// of twinWidth: group64 on the widened run buf (buf[i] is src[lo+x0+i])
// where normal holds (normalProducts' test for every product these outputs
// take), group32 on src where it does not; a group either flags is
// computed again by redo32, and so is the tail of fewer than twinWidth.
func runWide(acc, src []float32, x0, m int, buf []float64, offs []int, lo int, w []float32, w64 []float64, normal, set bool) {
	x := 0
	for ; x+twinWidth <= m; x += twinWidth {
		out := (*[twinWidth]float32)(acc[x0+x:])
		var a [twinWidth]float64
		if !set {
			for i, v := range out {
				a[i] = float64(v)
			}
		}
		var ok bool
		if normal {
			// widen has bounded every offs[t]−lo+x+twinWidth−1 by len(buf).
			ok = group64(&a, unsafe.Pointer(&buf[x]), offs, lo, w64)
		} else {
			ok = group32(&a, unsafe.Pointer(&src[x0+x]), offs, w)
		}
		if !ok {
			redo32(acc, src, x0+x, x0+x+twinWidth, offs, w, set)
			continue
		}
		for i := range out {
			out[i] = float32(a[i])
		}
	}
	redo32(acc, src, x0+x, x0+m, offs, w, set)
}

// blockTwin32 is the twin's Block for float32: setsGo on the per-set tap
// lists of Steps (offs; w, and w64 the same as float64s), each set a
// SetTaps, with the source run of every set widened once for all of them.
func blockTwin32(out []float32, outPitch, n int, src []float32, offs [][]int, w [][]float32, w64 [][]float64) {
	lo, hi, taps := math.MaxInt, math.MinInt, 0
	for _, o := range offs {
		if len(o) > 0 {
			l, h := offsRange(o)
			lo, hi, taps = min(lo, l), max(hi, h), taps+len(o)
		}
	}
	if !wideTwin || n < twinWidth || taps == 0 || !widePays(n, hi-lo, taps) {
		for i := range offs {
			tapsNarrow32(out[i*outPitch:][:n], src, offs[i], w[i], true)
		}
		return
	}
	sc := twinPool.Get().(*twinScratch)
	span := hi - lo
	chunk := wideChunk(n, span)
	if cap(sc.src) < span+chunk {
		sc.src = make([]float64, span+chunk)
	}
	for x0 := 0; x0 < n; x0 += chunk {
		m := min(chunk, n-x0)
		buf := sc.src[:span+m]
		minX := widen(buf, src[lo+x0:hi+x0+m])
		for i := range offs {
			acc := out[i*outPitch:][:n]
			if len(offs[i]) == 0 {
				clear(acc[x0 : x0+m])
				continue
			}
			normal := normalBound(minWeightBits(w[i]), minX)
			runWide(acc, src, x0, m, buf, offs[i], lo, w[i], w64[i], normal, true)
		}
	}
	twinPool.Put(sc)
}

// group64 is group32Normal on a widened source: it applies the taps to
// twinWidth accumulators a, the outputs whose source values (tap offset
// lo) are the float64s at p, p+1, …: a[i] = fma(w[t], p[offs[t]−lo+i],
// a[i]) in order of t, each rounded to float32 (held in float64). It
// reports false where some sum is a float32 midpoint (careful's first
// test; normalProducts has made the second needless). Each sum s is
// w·x + a in float64, the product exact (float32 significands of 24 bits
// give at most 48, and exponents from 2⁻²⁹⁸ to 2²⁵⁶ stay in float64's
// normal range), so s is the exact sum rounded once to float64 whether or
// not the compiler fuses the multiply and the add (arm64 does: the
// rounding of an exact product is the identity). The sums of each tap go
// to a ring slot (put8) and are tested one tap later (mid8), so the test
// runs on integer units beside the next tap's floating-point work instead
// of moving each sum to an integer register. Two taps per iteration, so
// that the slots are fixed. The caller guarantees that every
// p[offs[t]−lo+twinWidth−1] lies in its run.
func group64(a *[twinWidth]float64, p unsafe.Pointer, offs []int, lo int, w []float64) bool {
	var ring [2][5]uint64 // zeros test as no midpoint
	var flag uint64
	rA, rB := unsafe.Pointer(&ring[0]), unsafe.Pointer(&ring[1])
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	w = w[:len(offs)]
	t := 0
	for ; t+2 <= len(offs); t += 2 {
		wt := w[t]
		v := (*[twinWidth]float64)(unsafe.Add(p, (offs[t]-lo)*8))
		s0 := wt*v[0] + a0
		s1 := wt*v[1] + a1
		s2 := wt*v[2] + a2
		s3 := wt*v[3] + a3
		s4 := wt*v[4] + a4
		s5 := wt*v[5] + a5
		s6 := wt*v[6] + a6
		s7 := wt*v[7] + a7
		put8(rA, s0, s1, s2, s3, s4, s5, s6, s7)
		flag |= mid8(rB)
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))

		wt = w[t+1]
		v = (*[twinWidth]float64)(unsafe.Add(p, (offs[t+1]-lo)*8))
		s0 = wt*v[0] + a0
		s1 = wt*v[1] + a1
		s2 = wt*v[2] + a2
		s3 = wt*v[3] + a3
		s4 = wt*v[4] + a4
		s5 = wt*v[5] + a5
		s6 = wt*v[6] + a6
		s7 = wt*v[7] + a7
		put8(rB, s0, s1, s2, s3, s4, s5, s6, s7)
		flag |= mid8(rA)
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))
	}
	if t < len(offs) {
		wt := w[t]
		v := (*[twinWidth]float64)(unsafe.Add(p, (offs[t]-lo)*8))
		s0 := wt*v[0] + a0
		s1 := wt*v[1] + a1
		s2 := wt*v[2] + a2
		s3 := wt*v[3] + a3
		s4 := wt*v[4] + a4
		s5 := wt*v[5] + a5
		s6 := wt*v[6] + a6
		s7 := wt*v[7] + a7
		put8(rA, s0, s1, s2, s3, s4, s5, s6, s7)
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))
	}
	flag |= mid8(rA) | mid8(rB)
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a0, a1, a2, a3, a4, a5, a6, a7
	return flag&midFlags == 0
}

// put8 stores eight sums into a ring slot r (at least 36 bytes) so that
// 32 of its bytes hold the low 32 bits of each, in order, four to a sum:
// each sum is stored 4 bytes after the one before, so that it overwrites
// that one's high half. Little-endian, the low half is a float64's first
// four bytes: the stores run first to last and the low halves lie at
// bytes 0…31. Big-endian it is the last four: the stores run last to
// first, and the low halves lie at bytes 4…35 (mid8 reads from byte 4).
// Every store is 4-byte aligned, which wideTwin's architectures take at
// full speed.
func put8(r unsafe.Pointer, s0, s1, s2, s3, s4, s5, s6, s7 float64) {
	if cpu.IsBigEndian {
		*(*float64)(unsafe.Add(r, 28)) = s7
		*(*float64)(unsafe.Add(r, 24)) = s6
		*(*float64)(unsafe.Add(r, 20)) = s5
		*(*float64)(unsafe.Add(r, 16)) = s4
		*(*float64)(unsafe.Add(r, 12)) = s3
		*(*float64)(unsafe.Add(r, 8)) = s2
		*(*float64)(unsafe.Add(r, 4)) = s1
		*(*float64)(r) = s0
		return
	}
	*(*float64)(r) = s0
	*(*float64)(unsafe.Add(r, 4)) = s1
	*(*float64)(unsafe.Add(r, 8)) = s2
	*(*float64)(unsafe.Add(r, 12)) = s3
	*(*float64)(unsafe.Add(r, 16)) = s4
	*(*float64)(unsafe.Add(r, 20)) = s5
	*(*float64)(unsafe.Add(r, 24)) = s6
	*(*float64)(unsafe.Add(r, 28)) = s7
}

// mid8 tests the eight sums put8 stored at r, two to a 64-bit word (a
// 32-bit half each: the low 32 bits of a sum), and returns a value with a
// bit of midFlags set if one of them is a float32 midpoint, careful's
// first test: its low 29 bits 1000…0. Why it is exact, per word W of
// halves h₁:h₀: W&m ^ h leaves in each half the low 29 bits with the top
// one flipped, a number below 2²⁹ that is 0 exactly for a midpoint; W − k
// then subtracts 1 from each half. A half of 1 … 2²⁹−1 gives a result
// below 2²⁹ (bit 31 of the half clear) and borrows nothing; a zero half
// gives all ones (bit 31 set) and borrows from the half above, which can
// only set bits there too. So bit 31 or 63 is set iff a half is zero.
// ORing the results of every word of every tap keeps the answer.
func mid8(r unsafe.Pointer) uint64 {
	const m, h, k = 0x1fffffff_1fffffff, 0x10000000_10000000, 0x00000001_00000001
	if cpu.IsBigEndian {
		r = unsafe.Add(r, 4)
	}
	q := (*[4]uint64)(r)
	return (q[0]&m ^ h - k) | (q[1]&m ^ h - k) | (q[2]&m ^ h - k) | (q[3]&m ^ h - k)
}

// midFlags is the bits of mid8's result that flag a midpoint.
const midFlags = 0x80000000_80000000
