// common.cl: what every kernel family shares: the border rule, the
// conversion of results into the output type, the outer axes' plane
// mapping, the index type and the ways weights arrive. The border rule and
// the rounding mirror package nd (nd.Border.Index, nd.Round), which the
// tests compare against.

// Border modes, numbered as nd.Border.
#define BORDER_REFLECT 0
#define BORDER_MIRROR 1
#define BORDER_NEAREST 2
#define BORDER_WRAP 3
#define BORDER_CONSTANT 4

INLINE long floor_mod(long a, long m) {
	long r = a % m;
	return r < 0 ? r + m : r;
}

// border_index maps position p of an axis of length n into [0, n) by the
// border rule, at any distance. BORDER_CONSTANT has no mapping: callers
// test inside(p, n) first.
INLINE long border_index(long p, long n) {
	if (p >= 0 && p < n) {
		return p;
	}
#if BORDER == BORDER_REFLECT
	long q = floor_mod(p, 2 * n);
	return q >= n ? 2 * n - 1 - q : q;
#elif BORDER == BORDER_MIRROR
	if (n == 1) {
		return 0;
	}
	long q = floor_mod(p, 2 * n - 2);
	return q >= n ? 2 * n - 2 - q : q;
#elif BORDER == BORDER_NEAREST
	return p < 0 ? 0 : n - 1;
#elif BORDER == BORDER_WRAP
	return floor_mod(p, n);
#else
	return 0;
#endif
}

// accumulate adds w·v to acc with one correctly rounded fused
// multiply-add, skipping zero weights as scipy does (its footprint leaves
// them out), so that a NaN or Inf under a zero tap does not reach the
// output. Every engine adds the nonzero taps in the kernel's row-major
// order this way, so all give the same bits.
INLINE ACC_T accumulate(ACC_T acc, ACC_T w, ACC_T v) {
	return w != (ACC_T)0 ? fma_rn(w, v, acc) : acc;
}

INLINE int inside(long p, long n) { return p >= 0 && p < n; }

// Integers of at most 16 bits with a float accumulator (IN_SMALL_INT,
// OUT_SMALL_INT) are converted through a float's bits: 1.5·2²³ + x is a
// float whose bits are 0x4B400000 + x for every |x| < 2²², so integer adds
// and one float add convert exactly, at the full rate of those
// instructions, where the conversion instructions (I2F, F2I, FRND) run at
// an eighth of the FMA rate and dominated small integer kernels.
#define MAGIC_F 12582912.0f
#define MAGIC_BITS 0x4B400000

// to_acc widens an input value to ACC_T, exactly.
INLINE ACC_T to_acc(IN_T x) {
#if IN_SMALL_INT
	return as_float(MAGIC_BITS + (int)x) - MAGIC_F;
#else
	return (ACC_T)x;
#endif
}

// to_output converts an accumulated value to OUT_T as nd.Round does:
// integers round half to even and saturate, NaN becoming 0.
INLINE OUT_T to_output(ACC_T v) {
#if OUT_SMALL_INT
	// Saturate first (fmax of NaN and 0 is 0, so unsigned types need no
	// NaN test); adding 1.5·2²³ then rounds half to even, and the sum's
	// bits hold the integer.
#if (OUT_MIN) != 0
	if (isnan(v)) {
		return (OUT_T)0;
	}
#endif
	v = fmin(fmax(v, (ACC_T)OUT_MIN), (ACC_T)OUT_MAX);
	return (OUT_T)(as_int(v + MAGIC_F) - MAGIC_BITS);
#elif OUT_INTEGER
	if (isnan(v)) {
		return (OUT_T)0;
	}
	v = rint(v);
	// Compared, not clamped: OUT_MAX of int32 is not a float32 value.
	if (v <= (ACC_T)OUT_MIN) {
		return (OUT_T)OUT_MIN;
	}
	if (v >= (ACC_T)OUT_MAX) {
		return (OUT_T)OUT_MAX;
	}
	return (OUT_T)v;
#else
	return (OUT_T)v;
#endif
}

#ifdef NOUTER
// outer_plane is the input plane outer tap t of output plane `plane`
// reads — the outer axes (4 ints each in outer: input length, output
// length, kernel extent, shift) mapped by the border rule — or −1 for a
// plane wholly outside (constant border: every value is cval). Callers
// pass plane < planes (the output extents' product) and t < OUTER_TAPS
// (the kernel extents'), so on the first axis, the last taken apart, what
// is left of both is already its coordinate: no division there (with one
// outer axis, none at all: a run-time division took ~30 instructions per
// outer tap).
INLINE long outer_plane(__constant int* restrict outer, long plane, long t) {
	long src = 0, rest = plane, tap = t, stride = 1;
#pragma unroll
	for (int d = NOUTER - 1; d >= 0; d--) {
		const long n_in = outer[4 * d], n_out = outer[4 * d + 1];
		const long k = outer[4 * d + 2], shift = outer[4 * d + 3];
		const long p = (d == 0 ? rest : rest % n_out) + (d == 0 ? tap : tap % k) - shift;
		if (d > 0) {
			rest /= n_out;
			tap /= k;
		}
		if (src >= 0) {
#if BORDER == BORDER_CONSTANT
			if (!inside(p, n_in)) {
				src = -1;
			} else {
				src += p * stride;
			}
#else
			src += border_index(p, n_in) * stride;
#endif
		}
		stride *= n_in;
	}
	return src;
}
#endif

// The index type: int where the host found every index fits (IDX32).
#if IDX32
typedef int idx_t;
#else
typedef long idx_t;
#endif

#ifdef C
// load_sample reads sample c of position (py, px) of input plane src —
// planes of in_y rows of in_x positions of C samples — by the border rule:
// cval outside for the constant border (src < 0 marks a plane wholly
// outside), the mapped position otherwise. The direct families stage
// their tiles through it (and direct.cl reads its taps so).
INLINE ACC_T load_sample(__global const IN_T* restrict in, idx_t src, idx_t py, idx_t px, idx_t c,
	idx_t in_y, idx_t in_x, ACC_T cval)
{
#if BORDER == BORDER_CONSTANT
	if (src < 0 || py < 0 || py >= in_y || px < 0 || px >= in_x) {
		return cval;
	}
	return to_acc(in[(src * in_y + py) * (in_x * C) + px * C + c]);
#else
	return to_acc(in[(src * in_y + (idx_t)border_index(py, in_y)) * (in_x * C) + (idx_t)border_index(px, in_x) * C + c]);
#endif
}
#endif

// has_value: whether position p of an axis of n has a value after the
// border rule — only the constant border leaves positions wholly outside
// (whose rows the fused separable kernels fill with a constant instead of
// reading); every other rule maps each position inside.
INLINE int has_value(idx_t p, idx_t n) {
#if BORDER == BORDER_CONSTANT
	return p >= 0 && p < n;
#else
	return 1;
#endif
}

// position_of is the position of element pe of a row of C samples per
// position — floor(pe / C), pe may be negative (left of the row) — which
// the border rule then maps.
#define position_of(pe) ((pe) >= 0 ? (pe) / C : -((-(pe) + C - 1) / C))

#if defined(C) && BORDER != BORDER_CONSTANT
// stage_edge stages an edge tile's footprint of input plane src — rows
// rows from fy0, elems elements from fe0, converted once — into dst
// (element q of row r at r·pitch + q, plus q / skew where skew > 0: the
// skewed rows of tiled.cl) by group_size work-items, reading the part
// inside the plane plainly and only the frame around it (whole rows above
// and below, the columns beside) by the border rule. Mapping every
// element, a warp paid the border rule wherever one lane needed it: a
// volume's tiles are small against their halo (on a 256² plane 20 of 32
// tiles of 64 × 32 touch an edge), and bank.cl's banks ran 20–31% slower
// under reflect and wrap than under the constant border, with 10.6% more
// instructions (ncu, bench/results/2026-11-27-h100-s35, calls 6–8). The
// constant border keeps its per-element compare, as cheap.
INLINE void stage_edge(LOCAL_PTR ACC_T* restrict dst, int pitch, int skew, int rows, int elems, int group_size,
	__global const IN_T* restrict in, idx_t src, idx_t fy0, idx_t fe0, idx_t in_y, idx_t in_x, int lid, ACC_T cval)
{
	const idx_t in_row = in_x * C;
	// The footprint's rows [r0, r1) and elements [q0, q1) inside the plane;
	// none for a footprint beside it.
	int r0 = (int)(max(fy0, (idx_t)0) - fy0), r1 = (int)(min(fy0 + rows, in_y) - fy0);
	int q0 = (int)(max(fe0, (idx_t)0) - fe0), q1 = (int)(min(fe0 + elems, in_row) - fe0);
	if (src < 0 || r1 <= r0 || q1 <= q0) {
		r0 = r1 = q0 = q1 = 0;
	}
	// Whole rows, so that the divisor is a constant; the few elements
	// outside [q0, q1) are the frame's.
	for (int i = lid; i < (r1 - r0) * elems; i += group_size) {
		const int k = i / elems, q = i - k * elems, r = r0 + k;
		if (q >= q0 && q < q1) {
			dst[r * pitch + q + (skew > 0 ? q / skew : 0)] = to_acc(in[(src * in_y + fy0 + r) * in_row + fe0 + q]);
		}
	}
	// The frame: rows_out whole rows, then `sides` elements of each inside
	// row (those before q0, then those from q1).
	const int rows_out = r0 + (rows - r1), sides = q0 + (elems - q1);
	const int frame = rows_out * elems + (r1 - r0) * sides;
	for (int i = lid; i < frame; i += group_size) {
		int r, q;
		if (i < rows_out * elems) {
			const int k = i / elems;
			r = k < r0 ? k : r1 + (k - r0);
			q = i - k * elems;
		} else {
			const int j = i - rows_out * elems, k = j / sides, m = j - k * sides;
			r = r0 + k;
			q = m < q0 ? m : q1 + (m - q0);
		}
		const idx_t pe = fe0 + q;
		const idx_t px = position_of(pe);
		dst[r * pitch + q + (skew > 0 ? q / skew : 0)] = load_sample(in, src, fy0 + r, px, pe - px * C, in_y, in_x, cval);
	}
}
#endif

// The weights: by value among the kernel's parameters on CUDA where the
// host put them there (TAPS_IN_PARAMS: each fma takes its weight straight
// from the constant bank), else a __constant buffer; TAP(i) reads one.
#if defined(__CUDACC__) && TAPS_IN_PARAMS
struct taps_t {
	ACC_T w[TAPS_N];
};
#define TAPS_PARAM const struct taps_t taps_v
#define TAP(i) (taps_v.w[i])
#else
#define TAPS_PARAM __constant ACC_T* restrict taps
#define TAP(i) (taps[i])
#endif

// NONZERO(i, w): whether weight i (value w) may be nonzero. With
// ALL_NONZERO, or a bitmap of the first 256 weights (NZ0…NZ3) when the
// weights are few, it is known when the kernel is compiled and zero taps
// vanish from the code; otherwise each tap tests its weight.
#if ALL_NONZERO
#define NONZERO(i, w) 1
#elif defined(NZ0)
#define NZ_WORD(i) ((i) < 64 ? NZ0 : (i) < 128 ? NZ1 : (i) < 192 ? NZ2 : NZ3)
#define NONZERO(i, w) ((NZ_WORD(i) >> ((i) % 64)) & 1)
#else
#define NONZERO(i, w) ((w) != (ACC_T)0)
#endif

// X_PIECE(row, dst): the X pass of one piece of a staged row, shared by
// the fused separable kernels (sepring.cl, sep3.cl): the RX outputs dst[0],
// …, dst[RX − 1] of the staged values row[0 … RX + (KX − 1)·C), each the
// sum from zero of its KX taps in order, one fma each (the CPU's pass).
// Value q of the piece is tap (q − rx)/C of output rx; q ascends, so each
// output's taps arrive in order. A macro, not a function, so that the taps
// stay where TAP reads them (on CUDA, the kernel's parameters) and every
// loop unrolls with compile-time indices.
#define X_PIECE(row, dst) \
	do { \
		ACC_T sums_[RX]; \
		_Pragma("unroll") for (int rx_ = 0; rx_ < RX; rx_++) { \
			sums_[rx_] = (ACC_T)0; \
		} \
		_Pragma("unroll") for (int q_ = 0; q_ < RX + (KX - 1) * C; q_++) { \
			const ACC_T v_ = (row)[q_]; \
			_Pragma("unroll") for (int rx_ = 0; rx_ < RX; rx_++) { \
				const int d_ = q_ - rx_; \
				if (d_ >= 0 && d_ % C == 0 && d_ / C < KX) { \
					const ACC_T w_ = TAP(d_ / C); \
					if (NONZERO(d_ / C, w_)) { \
						sums_[rx_] = fma_rn(w_, v_, sums_[rx_]); \
					} \
				} \
			} \
		} \
		_Pragma("unroll") for (int rx_ = 0; rx_ < RX; rx_++) { \
			(dst)[rx_] = sums_[rx_]; \
		} \
	} while (0)

// Y_COLUMN(acc, col): the Y pass down one column of a local intermediate,
// shared by sep3.cl and septile.cl: acc[r] (r < RY) takes the Y taps TAP_Y
// + jy of the column's rows r + jy (col points at its first row, rows
// INTER_PITCH apart), one fma each; row q is tap q − r of output r, so the
// taps arrive in order as q ascends.
#define Y_COLUMN(acc, col) \
	do { \
		_Pragma("unroll") for (int q_ = 0; q_ < RY + KY - 1; q_++) { \
			const ACC_T v_ = (col)[q_ * INTER_PITCH]; \
			_Pragma("unroll") for (int r_ = 0; r_ < RY; r_++) { \
				const int jy_ = q_ - r_; \
				if (jy_ >= 0 && jy_ < KY) { \
					const ACC_T w_ = TAP(TAP_Y + jy_); \
					if (NONZERO(TAP_Y + jy_, w_)) { \
						(acc)[r_] = fma_rn(w_, v_, (acc)[r_]); \
					} \
				} \
			} \
		} \
	} while (0)

// DIRECT_PARAMS: the arguments of the direct method's kernels (tiled.cl,
// rows.cl, bank.cl; direct.cl's, with the weights always in a buffer),
// in the order kernels.NewDirect builds them; DIRECT_SIZES declares their
// lengths in idx_t (in_y, in_x, out_y, out_x, planes) and the rows' element
// counts (in_row, out_row).
#define DIRECT_PARAMS \
	__global const IN_T* restrict in, \
	__global OUT_T* restrict out, \
	TAPS_PARAM, \
	__constant int* restrict outer, \
	const long in_y_, const long in_x_, \
	const long out_y_, const long out_x_, \
	const long planes_, \
	const ACC_T cval
#define DIRECT_SIZES \
	const idx_t in_y = (idx_t)in_y_, in_x = (idx_t)in_x_; \
	const idx_t out_y = (idx_t)out_y_, out_x = (idx_t)out_x_, planes = (idx_t)planes_; \
	const idx_t in_row = in_x * C, out_row = out_x * C

// FUSED_PASS_PARAMS: the arguments of the fused separable kernels
// (sepfused.cl, sepring.cl, septile.cl), in the order every family keeps
// (kernels.fusedLaunch builds them once for all three).
#define FUSED_PASS_PARAMS \
	__global const IN_T* restrict in, \
	__global OUT_T* restrict out, \
	TAPS_PARAM, \
	__constant int* restrict unused, \
	const long ny_, const long nx_, \
	const long my_, const long mx_, \
	const long planes_, const long stride_, const long offset_, \
	const ACC_T cval

// 4-vector loads of the input (VECTOR_LOADS) and stores of the output
// (VECTOR_STORES), where the host found the rows 4-aligned; IN_T4 and
// OUT_T4 are the element types' 4-vectors.
#if VECTOR_LOADS
#ifdef __CUDACC__
#define LOAD4_IN(p) (*(const IN_T4*)(p))
#else
#define LOAD4_IN(p) vload4(0, p)
#endif
#endif
#if VECTOR_STORES
#ifdef __CUDACC__
#define STORE4(p, v) (*(OUT_T4*)(p) = (v))
#else
#define STORE4(p, v) vstore4((v), 0, (p))
#endif
#endif
