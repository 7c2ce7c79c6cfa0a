package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// GemmShape is the work decomposition of gemm.cl: a block of WarpsN ×
// WarpsY warps, each computing RY output rows by MX m-tiles of 16 output
// elements for NTW n-tiles of 8 kernels. Zero fields take
// DefaultGemmShape's.
//
// Stages is 2 to double-buffer the staged tiles (the next outer tap's
// loads in flight during this one's products, one barrier per tap), 1
// for one tile between two barriers; 0 takes 2 where each thread's share
// of a tile is at most gemmMaxStageN values.
//
// MinBlocks, where positive, asks the compiler to fit that many blocks
// per multiprocessor (__launch_bounds__), capping each thread's registers.
type GemmShape struct {
	MX, RY, NTW, WarpsN, WarpsY int
	Stages                      int
	MinBlocks                   int
	// Reorder lets the compiler schedule the mma instructions around the
	// fragment loads (asm without volatile); the default keeps them in
	// program order (asm volatile), the order measured on the device.
	Reorder bool
	// TF32 keeps the 3xTF32 path where the FP16 one would run (8-bit
	// inputs): the A/B of the two.
	TF32 bool
	// FP16 is NewGemm's answer, not a request: the launch takes the FP16
	// path (gemmF16).
	FP16 bool
}

func (s GemmShape) String() string {
	d := fmt.Sprintf("%dx%d warps, %d rows x %d elements x %d kernels each", s.WarpsN, s.WarpsY, s.RY, 16*s.MX, 8*s.NTW)
	if s.Stages == 2 {
		d += ", double-buffered"
	}
	if s.MinBlocks > 0 {
		d += fmt.Sprintf(", %d blocks per multiprocessor", s.MinBlocks)
	}
	if s.Reorder {
		d += ", mma reordered"
	}
	if s.TF32 {
		d += ", TF32 asked for"
	}
	return d
}

// gemmMaxStageN bounds the values a thread holds in registers for the
// next tile when double-buffering (and gemm.cl's bit mask of them).
const gemmMaxStageN = 16

func (s GemmShape) describe() string {
	if s.FP16 {
		return "tensor cores (FP16 weights split hi+lo, m16n8k16), " + s.String()
	}
	return "tensor cores (3xTF32), " + s.String()
}

// GemmOptions are the limits NewGemm plans within.
type GemmOptions struct {
	// MaxGroupsYZ bounds the grid's y and z extents (65535 on CUDA).
	MaxGroupsYZ int
	// MaxLocalBytes bounds the staged tile (static shared memory); 0
	// takes 48 KiB.
	MaxLocalBytes int
	// Shape fixes the decomposition (experiments); zero fields take the
	// default's.
	Shape GemmShape
}

// gemmMaxTiles bounds the taps' n-tiles (8 kernels each) a block covers;
// larger banks run in groups (grid X).
const gemmMaxTiles = 4

// gemmHeldRegs bounds the weight registers a warp holds for a whole outer
// tap (B_HELD: 4 per float4).
const gemmHeldRegs = 64

// DefaultGemmShape is the decomposition for a bank of bank kernels with ky
// kernel rows (f16: by the FP16 path): 8 output rows per warp (each A
// fragment then feeds up to KY rows), n-tiles over warps (two per warp
// where the bank has four), 4 warps a block, double-buffered; on the FP16
// path a bank of one n-tile (≤ 8 kernels) asks for 5 blocks per
// multiprocessor (≤ 102 registers a thread: S000 bank 8 0.84 → 0.78 ms;
// bank 16 lost 2 % so, bank 32 3 % with 4). Measured on the H100 and H200
// for S000 (docs/perf/gemm.md): banks of 8, 16 and 32 ran fastest so
// among the shapes tried.
func DefaultGemmShape(bank, ky int, f16 bool) GemmShape {
	nt := min(ceilDiv(bank, 8), gemmMaxTiles)
	s := GemmShape{MX: 1, RY: 8, NTW: 1, WarpsN: nt, Stages: 2}
	if nt == 4 {
		s.NTW, s.WarpsN = 2, 2
	}
	s.WarpsY = max(1, 4/s.WarpsN)
	if ky == 1 {
		s.RY, s.MX = 1, 4
		s.WarpsY = max(1, 8/s.WarpsN)
	}
	if f16 && nt == 1 && ky > 1 {
		s.MinBlocks = 5
	}
	return s
}

// GemmWhy says why the gemm method cannot run p (nil: it can): it needs
// float32 accumulation (float64 and wide integer data run exactly by the
// other methods), finite weights and cval, and at most 256 kernels.
func GemmWhy(p *nd.Problem) error {
	if err := CheckDTypes(p); err != nil {
		return err
	}
	if p.Wide {
		return fmt.Errorf("gemm accumulates in float32, and %v data or %v output needs float64", p.In, p.Out)
	}
	if len(p.Kernels) > 256 {
		return fmt.Errorf("gemm takes banks of at most 256 kernels, not %d", len(p.Kernels))
	}
	return p.RealFinite32("gemm")
}

// inExactTF32 reports whether every value of dtype d is exact in TF32
// (11 significant bits): 8-bit integers.
func inExactTF32(d nd.DType) bool { return d == nd.Uint8 || d == nd.Int8 }

// gemmExactTF32 reports whether every value gemm.cl stages for p is exact
// in TF32, so that it need not split them: 8-bit data, and a cval
// (float32, as the kernels take it) that TF32 holds where the border uses
// it. A cval such as 0.1 with uint8 data takes the split.
func gemmExactTF32(p *nd.Problem) bool {
	if !inExactTF32(p.In) {
		return false
	}
	cval := float32(p.CVal)
	return p.Border != nd.Constant || RoundTF32(cval) == cval
}

// gemmF16MaxC bounds the interleaved channels of the FP16 path: its
// staging shuffles each value's pair partner from the lane C on, so a
// warp stages 32 − C values a round.
const gemmF16MaxC = 8

// gemmF16 says whether p takes the FP16 path (its staged values exact in
// FP16: 8-bit data and a cval FP16 holds where the border uses it; at
// most gemmF16MaxC channels) and
// gives each kernel's scale exponent s: its weights times 2^s have their
// largest magnitude in [2^14, 2^15) (0 for a kernel of zeros), so that
// their FP16 hi and lo parts keep 22 bits as 3xTF32 does. A kernel whose
// 2^−s float32 cannot hold (|s| > 126: weights below 2^−112 or above
// 2^126 only) keeps p on the TF32 path.
func gemmF16(p *nd.Problem) ([]int, bool) {
	if !inExactTF32(p.In) {
		return nil, false
	}
	if cval := float32(p.CVal); p.Border == nd.Constant && RoundF16(cval) != cval {
		return nil, false
	}
	if _, _, _, c := canonical(problemAxes(p)); c > gemmF16MaxC {
		return nil, false
	}
	scales := make([]int, len(p.Kernels))
	for i, k := range p.Kernels {
		m := 0.0
		for _, w := range k.Dense {
			m = max(m, math.Abs(float64(float32(w))))
		}
		if m == 0 {
			continue
		}
		_, e := math.Frexp(m) // m = f·2^e, f in [0.5, 1)
		scales[i] = 15 - e
		if scales[i] > 126 || scales[i] < -126 {
			return nil, false
		}
	}
	return scales, true
}

// NewGemm specialises the gemm method (gemm.cl) for p. It returns nil, nil
// when the output is empty.
func NewGemm(p *nd.Problem, opt GemmOptions) (*Launch, error) {
	if err := GemmWhy(p); err != nil {
		return nil, &nd.UnsupportedError{What: "problem for the gemm method", Value: err.Error()}
	}
	if slices.Contains(p.OutShape, 0) || slices.Contains(p.InShape, 0) {
		return nil, nil
	}
	if opt.MaxGroupsYZ <= 0 {
		opt.MaxGroupsYZ = 65535
	}
	if scales, f16 := gemmF16(p); f16 && !opt.Shape.TF32 {
		l, err := newGemm(p, opt, scales)
		if err != nil || l == nil || slices.Contains(l.Defines, "STAGES=2") && slices.Contains(l.Defines, "B_HELD=1") {
			return l, err
		}
	}
	return newGemm(p, opt, nil)
}

// newGemm is NewGemm on the FP16 path where scales is not nil (gemmF16's),
// else on the TF32 path. The FP16 path is only written (and measured)
// double-buffered with the weights held in registers: where its
// decomposition would be otherwise (long kernels, large tiles), NewGemm
// takes the TF32 path.
func newGemm(p *nd.Problem, opt GemmOptions, scales []int) (*Launch, error) {
	f16 := scales != nil
	outer, y, x, c := canonical(problemAxes(p))
	bank := len(p.Kernels)
	s := DefaultGemmShape(bank, y.k, f16)
	for _, f := range []struct {
		dst *int
		v   int
	}{{&s.MX, opt.Shape.MX}, {&s.RY, opt.Shape.RY}, {&s.NTW, opt.Shape.NTW}, {&s.WarpsN, opt.Shape.WarpsN}, {&s.WarpsY, opt.Shape.WarpsY}, {&s.Stages, opt.Shape.Stages}, {&s.MinBlocks, opt.Shape.MinBlocks}} {
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	nt := s.WarpsN * s.NTW
	groups := ceilDiv(ceilDiv(bank, 8), nt)
	kch := ceilDiv(x.k, 8)
	outerTaps, planes := 1, 1
	l := &Launch{Family: "gemm", Name: "correlate_gemm", CVal: p.CVal, Shape: s}
	for _, a := range outer {
		l.Outer = append(l.Outer, int32(a.in), int32(a.out), int32(a.k), int32(a.shift))
		outerTaps *= a.k
		planes *= a.out
	}
	if len(l.Outer) == 0 {
		l.Outer = []int32{0}
	}
	if outerTaps*y.k*x.k != len(p.Kernels[0].Dense) {
		return nil, fmt.Errorf("kernels: canonical form has %d taps, the kernel %d", outerTaps*y.k*x.k, len(p.Kernels[0].Dense))
	}
	scaleAt := 0
	if f16 {
		l.Taps = gemmTapsF16(p, scales, outerTaps, y.k, x.k, kch, nt*groups)
		scaleAt = outerTaps * ceilDiv(y.k, 2) * kch * nt * groups * 32
	} else {
		l.Taps = gemmTaps(p, outerTaps, y.k, x.k, kch, nt*groups)
	}
	tileX, tileY := 16*s.MX, s.RY*s.WarpsY
	groupsY := ceilDiv(y.out, tileY)
	if groupsY > opt.MaxGroupsYZ {
		return nil, &nd.UnsupportedError{What: "axis length", Value: fmt.Sprint(y.out), Supported: fmt.Sprintf("at most %d rows in one launch", opt.MaxGroupsYZ*tileY)}
	}
	l.Local = [3]int{32 * s.WarpsN * s.WarpsY, 1, 1}
	l.Groups = [3]int{ceilDiv(x.out*c, tileX) * groups, groupsY, min(planes, opt.MaxGroupsYZ)}
	l.Scalars = []int64{int64(y.in), int64(x.in), int64(y.out), int64(x.out), int64(planes)}
	l.LocalBytes = (tileY + y.k - 1) * (tileX + (8*kch-1)*c + 1) * 4
	if opt.MaxLocalBytes <= 0 {
		opt.MaxLocalBytes = 48 << 10
	}
	if l.LocalBytes > opt.MaxLocalBytes {
		return nil, &nd.UnsupportedError{What: "kernel extent for the gemm method", Value: fmt.Sprint(p.KShape), Supported: fmt.Sprintf("kernels whose staged tile fits %d bytes of shared memory", opt.MaxLocalBytes)}
	}
	kRows := y.k
	if f16 {
		kRows = ceilDiv(y.k, 2)
	}
	held := kRows*kch*s.NTW*4 <= gemmHeldRegs
	threads := 32 * s.WarpsN * s.WarpsY
	stageN := ceilDiv((tileY+y.k-1)*(tileX+(8*kch-1)*c), threads)
	if f16 { // gemm.cl's STAGE_N: rounds of 32 − C values a warp
		stageN = ceilDiv(ceilDiv((tileY+y.k-1)*(tileX+(8*kch-1)*c), 32-c), threads/32)
	}
	if s.Stages != 1 && s.Stages != 2 {
		s.Stages = 2
	}
	// Double-buffered staging keeps each value's offset within an input
	// plane in an int, and the outer taps' planes in shared memory.
	if stageN > gemmMaxStageN || 2*l.LocalBytes+8*outerTaps > opt.MaxLocalBytes || int64(y.in)*int64(x.in)*int64(c) > math.MaxInt32 {
		s.Stages = 1
	}
	l.LocalBytes *= s.Stages
	if s.Stages == 2 {
		l.LocalBytes += 8 * outerTaps
	}
	s.Reorder, s.TF32, s.FP16 = opt.Shape.Reorder, opt.Shape.TF32, f16
	l.Shape = s
	l.Defines = append(typeDefines(p),
		fmt.Sprintf("BORDER=%d", p.Border),
		fmt.Sprintf("BANK=%d", bank),
		fmt.Sprintf("KY=%d", y.k), fmt.Sprintf("KX=%d", x.k),
		fmt.Sprintf("SHIFT_Y=%d", y.shift), fmt.Sprintf("SHIFT_X=%d", x.shift),
		fmt.Sprintf("C=%d", c),
		fmt.Sprintf("NOUTER=%d", len(outer)),
		fmt.Sprintf("OUTER_TAPS=%d", outerTaps),
		fmt.Sprintf("KCH=%d", kch),
		fmt.Sprintf("MX=%d", s.MX), fmt.Sprintf("RY=%d", s.RY), fmt.Sprintf("NTW=%d", s.NTW),
		fmt.Sprintf("WARPS_N=%d", s.WarpsN), fmt.Sprintf("WARPS_Y=%d", s.WarpsY),
		fmt.Sprintf("BANK_GROUPS=%d", groups),
		fmt.Sprintf("IN_SPLIT=%d", b2i(!f16 && !gemmExactTF32(p))),
		fmt.Sprintf("F16=%d", b2i(f16)),
		fmt.Sprintf("SCALE_AT=%d", scaleAt),
		fmt.Sprintf("B_HELD=%d", b2i(held)),
		fmt.Sprintf("STAGES=%d", s.Stages),
		fmt.Sprintf("MIN_BLOCKS=%d", max(s.MinBlocks, 0)),
		fmt.Sprintf("MMA_VOLATILE=%d", b2i(!s.Reorder)),
		fmt.Sprintf("OUT_PAIR=%d", b2i(p.Out == nd.Float32 && bank%2 == 0)),
	)
	slices.Sort(l.Defines)
	return l, nil
}

// gemmTaps lays the weights out as gemm.cl reads them: per outer tap t,
// kernel row jy, chunk c of 8 taps along X and n-tile nt of the padded
// bank (ntAll n-tiles), for each lane (g = lane/4, q = lane%4) the float4
// {hi(b0), hi(b1), lo(b0), lo(b1)} with b0 = W[jx = 8c + q][kernel 8nt +
// g], b1 at jx + 4; zero beyond the kernel's X extent and the bank.
func gemmTaps(p *nd.Problem, outerTaps, ky, kx, kch, ntAll int) []float64 {
	bank := len(p.Kernels)
	taps := make([]float64, outerTaps*ky*kch*ntAll*32*4)
	i := 0
	for t := range outerTaps {
		for jy := range ky {
			for c := range kch {
				for nt := range ntAll {
					for lane := range 32 {
						g, q := lane/4, lane%4
						k := 8*nt + g
						for h, jx := range []int{8*c + q, 8*c + q + 4} {
							w := float32(0)
							if k < bank && jx < kx {
								w = float32(p.Kernels[k].Dense[(t*ky+jy)*kx+jx])
							}
							hi, lo := SplitTF32(w)
							taps[i+h], taps[i+2+h] = float64(hi), float64(lo)
						}
						i += 4
					}
				}
			}
		}
	}
	return taps
}

// gemmTapsF16 lays the weights out as gemm.cl's F16 path reads them (a
// float64 per 32-bit word, holding its bits as a float32: two FP16
// values, never NaN or Inf as a float32 since FP16 parts are finite): per
// outer tap t, kernel-row pair p, chunk c and n-tile nt, for each lane (g
// = lane/4, q = lane%4) {hi(b01), hi(b23), lo(b01), lo(b23)}, b01 the
// pair W'[2p][8c + 2q + {0, 1}][kernel 8nt + g], b23 the same at kernel
// row 2p + 1, W' = W·2^s of the kernel; zero beyond the kernel and the
// bank. Then the scales 2^−s, one float per kernel of the padded bank
// (1 beyond it), to a whole float4.
func gemmTapsF16(p *nd.Problem, scales []int, outerTaps, ky, kx, kch, ntAll int) []float64 {
	bank := len(p.Kernels)
	kp := ceilDiv(ky, 2)
	n := outerTaps * kp * kch * ntAll * 32 * 4
	taps := make([]float64, n+ntAll*8)
	weight := func(k, t, jy, jx int) float32 {
		if k >= bank || jy >= ky || jx >= kx {
			return 0
		}
		return float32(math.Ldexp(float64(float32(p.Kernels[k].Dense[(t*ky+jy)*kx+jx])), scales[k]))
	}
	word := func(lo, hi float32) float64 {
		return float64(math.Float32frombits(uint32(F16Bits(lo)) | uint32(F16Bits(hi))<<16))
	}
	i := 0
	for t := range outerTaps {
		for pr := range kp {
			for c := range kch {
				for nt := range ntAll {
					for lane := range 32 {
						g, q := lane/4, lane%4
						k := 8*nt + g
						for h, jy := range []int{2 * pr, 2*pr + 1} {
							jx := 8*c + 2*q
							hi0, lo0 := SplitF16(weight(k, t, jy, jx))
							hi1, lo1 := SplitF16(weight(k, t, jy, jx+1))
							taps[i+h], taps[i+2+h] = word(hi0, hi1), word(lo0, lo1)
						}
						i += 4
					}
				}
			}
		}
	}
	for k := range ntAll * 8 {
		taps[n+k] = 1
		if k < bank {
			taps[n+k] = math.Ldexp(1, -scales[k])
		}
	}
	return taps
}

// RoundF16 rounds a float32 to the nearest FP16 value (10 fraction bits,
// subnormals below 2⁻¹⁴ in steps of 2⁻²⁴), ties to even, as PTX's
// cvt.rn.f16.f32 does; ±Inf beyond FP16's range (65504).
func RoundF16(x float32) float32 {
	v := float64(x)
	if math.IsInf(v, 0) || math.IsNaN(v) || v == 0 {
		return x
	}
	_, e := math.Frexp(math.Abs(v)) // |v| in [2^(e−1), 2^e)
	step := math.Ldexp(1, max(e-1, -14)-10)
	r := math.RoundToEven(v/step) * step
	if math.Abs(r) > 65504 {
		return float32(math.Inf(int(math.Copysign(1, v))))
	}
	return float32(r)
}

// SplitF16 splits x (|x| < 2^15) into hi = RoundF16(x) and lo =
// RoundF16(x − hi): |x − hi − lo| ≤ 2⁻²²·|x| + 2⁻²⁵ (lo's subnormal
// spacing).
func SplitF16(x float32) (hi, lo float32) {
	hi = RoundF16(x)
	return hi, RoundF16(x - hi)
}

// F16Bits is the FP16 encoding of x, which must be an FP16 value
// (RoundF16's): sign, 5 exponent bits (bias 15), 10 fraction bits.
func F16Bits(x float32) uint16 {
	v := float64(x)
	var sign uint16
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	switch {
	case v == 0:
		return sign
	case math.IsInf(v, 0):
		return sign | 0x7c00
	case v < 0x1p-14: // subnormal: multiples of 2⁻²⁴
		return sign | uint16(v*0x1p24)
	}
	f, e := math.Frexp(v) // v = f·2^e, f in [0.5, 1)
	return sign | uint16(e-1+15)<<10 | uint16((f*2-1)*1024)
}

// RoundTF32 rounds a float32 to the nearest TF32 value (10 fraction bits),
// ties away from zero, as PTX's cvt.rna.tf32.f32 does.
func RoundTF32(x float32) float32 {
	b := math.Float32bits(x)
	if e := b >> 23 & 0xff; e == 0xff {
		return x // Inf, NaN
	}
	b += 1 << 12
	return math.Float32frombits(b &^ (1<<13 - 1))
}

// SplitTF32 splits x into hi = RoundTF32(x) and lo = RoundTF32(x − hi):
// hi + lo keeps about 22 of x's 24 significant bits (|x − hi − lo| ≤
// 2⁻²²·|x|, or a subnormal's spacing).
func SplitTF32(x float32) (hi, lo float32) {
	hi = RoundTF32(x)
	return hi, RoundTF32(x - hi)
}

// GemmErrorBound bounds |gemm − exact| for one output of p, relative to
// absSum·maxAbs (Σ|w| of the largest kernel times the largest |x| of the
// extended input).
//
// 3xTF32 path: the weights' and (for inputs TF32 does not hold) the
// inputs' split loses at most 2⁻²¹ of each product, and each of the
// accumulator's additions — one per mma, 2 or 3 per chunk of 8 taps,
// whatever rounding the tensor cores use inside an mma — at most 2⁻²³ of
// the running sum: (2 or 3)·chunks·2⁻²³ + 2⁻²¹ in all.
//
// FP16 path (8-bit inputs, gemmF16): the inputs are exact; a kernel's
// weights scaled by 2^s (exact) have max|w'| ≥ 2^14, and w' − hi − lo is
// at most 2⁻²²·|w'| + 2⁻²⁵ (SplitF16), so the split loses at most
// (2⁻²² + taps·2⁻³⁹)·Σ|w'|·max|x|; the products of FP16 values are exact
// in float32, and each m16n8k16 (16 taps: two kernel rows of 8, KY odd
// padded with a zero row) is counted as two additions, as the two TF32
// mma it replaces are: 2·2·pairChunks·2⁻²³. The final multiplication by
// 2^−s is exact (a float32 result that is not subnormal).
//
// Where p may take either path (8-bit inputs: NDCONV_GEMM_SHAPE can ask
// for TF32), the bound is the larger of the two. It is at most the
// a-priori bound of a float32 direct sum of the same taps (taps·2⁻²⁴)
// wherever a chunk's slots are at least half used; the tests measure the
// actual error against it.
func GemmErrorBound(p *nd.Problem, absSum, maxAbs float64) float64 {
	outer, y, x, _ := canonical(problemAxes(p))
	outerTaps := outerTapCount(outer)
	kch := ceilDiv(x.k, 8)
	products := 2.0
	if !gemmExactTF32(p) {
		products = 3
	}
	adds := products * float64(outerTaps*y.k*kch)
	split := 0x1p-21
	if _, f16 := gemmF16(p); f16 {
		adds = max(adds, 2*float64(outerTaps*2*ceilDiv(y.k, 2)*kch))
		split = max(split, 0x1p-22+float64(outerTaps*y.k*x.k)*0x1p-39)
	}
	return (adds*0x1p-23 + split) * absSum * maxAbs
}
