package simd

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The float32 twin's group loop where the architecture allows it
// (overlapStores): the float64 arithmetic of group32Normal, in the same
// order, so the same bits, with careful's midpoint test in fewer
// instructions. group32Normal moves each sum to an integer register and
// keeps a minimum (move, shift, compare, conditional move: four
// instructions per sum, besides the ten of the multiply-add itself);
// group32Mid stores the sums of a tap so that the low halves of two lie in
// one 64-bit word (put8) and tests a word per two sums one tap later
// (mid8: load, and, xor, subtract, or), which runs on the integer units
// beside the next tap's floating-point work. Measured in
// docs/perf/cpu-engine.md, "2026-11-27: the exact twin".

// overlapStores reports whether the architecture stores a float64 at any
// multiple of four bytes, and loads a uint64 from one, at full speed, as
// put8 and mid8 do. Elsewhere (mips, riscv64, where a misaligned access may
// trap into the kernel) the twin keeps group32Normal. A constant, so the
// other branch is compiled out.
const overlapStores = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" ||
	runtime.GOARCH == "ppc64le" || runtime.GOARCH == "ppc64" || runtime.GOARCH == "s390x" || runtime.GOARCH == "loong64"

// groupNormal is the group loop of calls where normalProducts holds.
func groupNormal(a *[twinWidth]float64, p unsafe.Pointer, offs []int, w []float32) bool {
	if overlapStores {
		return group32Mid(a, p, offs, w)
	}
	return group32Normal(a, p, offs, w)
}

// group32Mid is group32Normal with the midpoint test of mid8: it applies
// the taps to twinWidth accumulators a, the outputs at p, p+1, …:
// a[i] = fma(w[t], p[offs[t]+i], a[i]) in order of t, each rounded to
// float32 (held in float64), and reports false where some sum is a float32
// midpoint (careful's first test; normalProducts has made the second
// needless). Each sum s is w·x + a in float64, the product exact (float32
// significands of 24 bits give at most 48, and exponents from 2⁻²⁹⁸ to
// 2²⁵⁶ stay in float64's normal range), so s is the exact sum rounded once
// to float64 whether or not the compiler fuses the multiply and the add
// (arm64 does: rounding an exact product changes nothing). The sums of
// each tap go to a ring slot (put8) and are tested one tap later (mid8);
// two taps per iteration, so that the slots are fixed. The caller
// guarantees that every p[offs[t]+twinWidth−1] lies in its source.
func group32Mid(a *[twinWidth]float64, p unsafe.Pointer, offs []int, w []float32) bool {
	var ring [2][5]uint64 // zeros test as no midpoint
	var flag uint64
	rA, rB := unsafe.Pointer(&ring[0]), unsafe.Pointer(&ring[1])
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	w = w[:len(offs)]
	t := 0
	for ; t+2 <= len(offs); t += 2 {
		wt := float64(w[t])
		v := (*[twinWidth]float32)(unsafe.Add(p, offs[t]*4))
		s0 := wt*float64(v[0]) + a0
		s1 := wt*float64(v[1]) + a1
		s2 := wt*float64(v[2]) + a2
		s3 := wt*float64(v[3]) + a3
		s4 := wt*float64(v[4]) + a4
		s5 := wt*float64(v[5]) + a5
		s6 := wt*float64(v[6]) + a6
		s7 := wt*float64(v[7]) + a7
		put8(rA, s0, s1, s2, s3, s4, s5, s6, s7)
		flag |= mid8(rB)
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))

		wt = float64(w[t+1])
		v = (*[twinWidth]float32)(unsafe.Add(p, offs[t+1]*4))
		s0 = wt*float64(v[0]) + a0
		s1 = wt*float64(v[1]) + a1
		s2 = wt*float64(v[2]) + a2
		s3 = wt*float64(v[3]) + a3
		s4 = wt*float64(v[4]) + a4
		s5 = wt*float64(v[5]) + a5
		s6 = wt*float64(v[6]) + a6
		s7 = wt*float64(v[7]) + a7
		put8(rB, s0, s1, s2, s3, s4, s5, s6, s7)
		flag |= mid8(rA)
		a0, a1, a2, a3 = float64(float32(s0)), float64(float32(s1)), float64(float32(s2)), float64(float32(s3))
		a4, a5, a6, a7 = float64(float32(s4)), float64(float32(s5)), float64(float32(s6)), float64(float32(s7))
	}
	if t < len(offs) { // an odd number of taps: the last
		wt := float64(w[t])
		v := (*[twinWidth]float32)(unsafe.Add(p, offs[t]*4))
		s0 := wt*float64(v[0]) + a0
		s1 := wt*float64(v[1]) + a1
		s2 := wt*float64(v[2]) + a2
		s3 := wt*float64(v[3]) + a3
		s4 := wt*float64(v[4]) + a4
		s5 := wt*float64(v[5]) + a5
		s6 := wt*float64(v[6]) + a6
		s7 := wt*float64(v[7]) + a7
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
