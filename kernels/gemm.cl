// gemm.cl: the gemm method (fast family, CUDA only): a bank of kernels
// computed as an implicit GEMM on the tensor cores, out[m][n] =
// Σ_k A[m][k]·B[k][n] with m an output element, n a kernel of the bank
// and k a tap, without materialising A (im2col): A[m][k] is read from an
// input tile staged in shared memory by the direct kernels' gather and
// border rules. The canonical form, arguments and output layout are
// direct.cl's:
//
//   input  [outer planes…][Y][X·C]   output [outer…][Y'][X'·C][BANK]
//
// Tensor cores multiply TF32 (8 exponent bits, 10+1 significant bits), so
// for float32 accuracy (CUTLASS's 3xTF32) each weight w is split on the
// host into w_hi = tf32(w) and w_lo = tf32(w − w_hi), and each input
// value x that TF32 does not hold exactly (IN_SPLIT: anything wider than
// 8-bit integers) into x_hi, x_lo on the device: x·w ≈ x_hi·w_hi +
// x_hi·w_lo + x_lo·w_hi (two products where x is exact), accumulated in
// float32. The error bound is kernels.GemmErrorBound's.
//
// F16 (8-bit inputs, exact in FP16): the FP16 tensor ops instead, mma.sync
// m16n8k16 (f32 += f16·f16), twice the taps per instruction at the same
// issue cost. Each kernel's weights are scaled on the host by a power of
// two 2^s (its largest |w| into [2^14, 2^15)) and split into FP16 hi + lo
// (two products per tap, as above); the accumulator is multiplied by
// 2^−s (exact) when stored. A chunk of 16 taps is two kernel rows (jy =
// 2p, 2p + 1) by 8 taps along X: k < 8 row 2p, k ≥ 8 row 2p + 1, KY odd
// padded with a zero row. The tile holds FP16 pairs (x[q], x[q + C]) as
// one 32-bit word, so that a fragment register (two consecutive taps of
// one row) is one shared load. It is written (and measured) only
// double-buffered with the weights held (NewGemm takes TF32 otherwise).
//
// Zero weights are multiplied like any other (they are padding, too), so
// an input holding NaN or Inf must not come here: the engine
// (internal/gpu/gemm.go) runs the direct method for such inputs.
//
// Decomposition: mma.sync m16n8k8 (row.col, f32 += tf32·tf32). The K axis
// (taps) is walked per outer tap t, per kernel row jy, per chunk c of 8
// taps along X (KX padded to KCH·8 with zero weights): a chunk's column k
// is tap jx = 8c + k, so that A[m][k] = tile[row][m + (8c + k)·C], a fixed
// offset from the output element (Toeplitz). A warp computes RY output
// rows × MX m-tiles of 16 elements × NTW n-tiles of 8 kernels; a block
// of WARPS_N × WARPS_Y warps a tile of TILE_Y = RY·WARPS_Y rows by
// TILE_X = 16·MX elements for NT = WARPS_N·NTW n-tiles; the grid's X
// walks tiles × kernel groups (BANK_GROUPS of 8·NT kernels).
//
// Per outer tap the block stages the tile (TILE_Y + KY − 1 rows of
// TILE_X + (8·KCH − 1)·C elements, converted to float); each warp then
// holds its weights for the whole outer tap in registers (B_HELD, where
// they fit: KY·KCH·NTW float4s) and walks the input rows: input row i
// loads its A fragments once and feeds every output row r with jy = i − r
// (up to KY of them), so each A load serves up to KY·NTW·2 (or ·3)
// products. Otherwise the walk is by jy, the weights loaded per jy.
//
// Defines: those of direct.cl (IN_T, OUT_T, ACC_T=float, OUT_INTEGER,
// OUT_MIN, OUT_MAX, BORDER, BANK, KY, KX, SHIFT_Y, SHIFT_X, C, NOUTER,
// OUTER_TAPS), KCH, MX, RY, NTW, WARPS_N, WARPS_Y, BANK_GROUPS, IN_SPLIT,
// B_HELD, OUT_PAIR (float32 output of an even bank: pairs stored as one
// float2), STAGES (2: the tiles double-buffered, see stage_fetch; 1: one
// tile, staged between two barriers), MIN_BLOCKS (__launch_bounds__'s
// blocks per multiprocessor; 0: none), MMA_VOLATILE, F16 (the FP16 path;
// IN_SPLIT 0) with SCALE_AT (where the per-kernel scales 2^−s start, in
// float4s of taps).
//
// Weights (taps, float4 each): [t][jy][c][n-tile of the whole padded
// bank][lane] = {b0_hi, b1_hi, b0_lo, b1_lo}, the lane's B fragment: b0 =
// W[jx = 8c + lane%4][kernel 8·nt + lane/4], b1 the same at jx + 4.
// F16: [t][p][c][n-tile][lane] = {hi(b01), hi(b23), lo(b01), lo(b23)},
// each an FP16 pair (the lower k in the low half): b01 = W'[2p][jx = 8c +
// 2·(lane%4) + {0, 1}][kernel 8·nt + lane/4], b23 the same at row 2p + 1;
// then the scales, one float per kernel of the padded bank.

#ifndef __CUDACC__
#error "gemm.cl is CUDA only (inline PTX mma.sync)"
#endif

#define NT (WARPS_N * NTW)
#define NT_ALL (NT * BANK_GROUPS)
#define TILE_X (16 * MX)
#define TILE_Y (RY * WARPS_Y)
#define TILE_ROWS (TILE_Y + KY - 1)
#define KXP (8 * KCH)
// One spare float per row keeps the rows of warps apart in the banks.
#define ROW_ELEMS (TILE_X + (KXP - 1) * C)
#define ROW_PITCH (ROW_ELEMS + 1)
#define THREADS (32 * WARPS_N * WARPS_Y)
#if F16 && (STAGES != 2 || !B_HELD)
#error "the FP16 path is double-buffered with the weights held (NewGemm takes TF32 otherwise)"
#endif
#if F16
// Weight rows per outer tap: kernel-row pairs.
#define KROWS ((KY + 1) / 2)
typedef unsigned TILE_T;
#else
#define KROWS KY
typedef float TILE_T;
#endif

// tf32 rounds to the nearest TF32 value, ties away (the tensor cores read
// a register's top 19 bits).
INLINE unsigned tf32(float x) {
	unsigned r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return r;
}

// mma adds A·B (16×8·8×8, TF32) to the 16×8 float accumulator d, in
// program order (MMA_VOLATILE=1), or scheduled by the compiler around the
// fragment loads (0: it is a pure function of its operands).
#if MMA_VOLATILE
#define MMA_ASM asm volatile
#else
#define MMA_ASM asm
#endif
INLINE void mma(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
	MMA_ASM("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

#if F16
// mma16 adds A·B (16×16·16×8, FP16 pairs) to the 16×8 float accumulator
// d: A's registers (row g, k 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8,
// 2t+8..); B's (k 2t..2t+1, column g), (2t+8.., g).
INLINE void mma16(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
	MMA_ASM("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// pack_f16 is the FP16 pair (lo in the low half, hi in the high), both
// exact here (8-bit values, a cval the host checked).
INLINE unsigned pack_f16(float lo, float hi) {
	unsigned r;
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}
#endif

#define STAGE_ELEMS (TILE_ROWS * ROW_ELEMS)
#if F16
// The F16 path's staging: a warp's round covers 32 − C new elements, its
// last C lanes the next round's first ones again, so that each writing
// lane takes its pair's partner (C elements on) from a lane of its own
// warp (a shuffle) instead of a second load. (The pairs at a row's last
// C elements take the next row's values: the fragments never read them.)
#define STAGE_STEP (32 - C)
#define STAGE_ROUNDS ((STAGE_ELEMS + STAGE_STEP - 1) / STAGE_STEP)
#define STAGE_N ((STAGE_ROUNDS + THREADS / 32 - 1) / (THREADS / 32))
#define STAGE_INDEX(j) (((int)(threadIdx.x >> 5) + (j) * (THREADS / 32)) * STAGE_STEP + (int)(threadIdx.x & 31))
#else
#define STAGE_N ((STAGE_ELEMS + THREADS - 1) / THREADS)
#define STAGE_INDEX(j) ((int)threadIdx.x + (j) * THREADS)
#endif

#if STAGES == 2
// stage_offsets gives this thread's staged values (element i =
// STAGE_INDEX(j) of the tile: row i / ROW_ELEMS, element i % ROW_ELEMS,
// from row y0 − SHIFT_Y and element e0 − SHIFT_X·C) their offsets within
// an input plane by the border rule, and sets bit j of *outside where
// the constant border makes the value cval or i is past the tile (offset
// 0 then: every load is of a real value, and unconditional). They are the
// same for every plane and outer tap, so they are computed once (the host
// keeps a plane's offsets within int).
INLINE void stage_offsets(long y0, long e0, long in_y, long in_x, int* off, unsigned* outside)
{
	const long in_row = in_x * C;
	unsigned out_bits = 0;
#pragma unroll
	for (int j = 0; j < STAGE_N; j++) {
		const int i = STAGE_INDEX(j);
		const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
		const long py = y0 + r - SHIFT_Y;
		const long pe = e0 + q - SHIFT_X * C;
		const long px = position_of(pe);
		const long c = pe - px * C;
		off[j] = 0;
		if (i >= STAGE_ELEMS) {
			out_bits |= 1u << j;
			continue;
		}
#if BORDER == BORDER_CONSTANT
		if (inside(py, in_y) && inside(px, in_x)) {
			off[j] = (int)(py * in_row + px * C + c);
		} else {
			out_bits |= 1u << j;
		}
#else
		off[j] = (int)(border_index(py, in_y) * in_row + border_index(px, in_x) * C + c);
#endif
	}
	*outside = out_bits;
}

// stage_fetch loads this thread's values of input plane src (−1: wholly
// outside, every value cval) at offsets off raw into pre. Nothing waits
// for the loads until stage_put.
INLINE void stage_fetch(__global const IN_T* restrict in, long src, long in_plane, const int* off, IN_T* pre)
{
	__global const IN_T* base = in + (src < 0 ? 0 : src) * in_plane;
#pragma unroll
	for (int j = 0; j < STAGE_N; j++) {
		pre[j] = base[off[j]];
	}
}

// stage_put converts the fetched values (cval where bit j of outside is
// set) and stores them into tile (F16: as pairs with the values C
// elements on, from the lanes C on).
INLINE void stage_put(LOCAL_PTR TILE_T* tile, const IN_T* pre, unsigned outside, ACC_T cval)
{
#pragma unroll
	for (int j = 0; j < STAGE_N; j++) {
		const int i = STAGE_INDEX(j);
		const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
		const float v = (outside >> j) & 1 ? cval : to_acc(pre[j]);
#if F16
		const float v2 = __shfl_down_sync(0xffffffffu, v, C);
		if ((threadIdx.x & 31) < STAGE_STEP && i < STAGE_ELEMS) {
			tile[r * ROW_PITCH + q] = pack_f16(v, v2);
		}
#else
		if (i < STAGE_ELEMS) {
			tile[r * ROW_PITCH + q] = v;
		}
#endif
	}
}
#endif

// A_FRAG loads the A fragment of m-tile mx, chunk c from tile row `row`
// (split into hi and lo parts with IN_SPLIT).
#if IN_SPLIT
#define A_FRAG(row, mx, c) \
	float av_[4]; \
	unsigned ah_[4], al_[4]; \
	{ \
		LOCAL_PTR const float* s_ = tile + (row) * ROW_PITCH + (mx) * 16 + g + (8 * (c) + t) * C; \
		av_[0] = s_[0]; \
		av_[1] = s_[8]; \
		av_[2] = s_[4 * C]; \
		av_[3] = s_[8 + 4 * C]; \
		_Pragma("unroll") for (int q_ = 0; q_ < 4; q_++) { \
			ah_[q_] = tf32(av_[q_]); \
			al_[q_] = tf32(av_[q_] - __uint_as_float(ah_[q_])); \
		} \
	}
#else
#define A_FRAG(row, mx, c) \
	unsigned ah_[4]; \
	{ \
		LOCAL_PTR const float* s_ = tile + (row) * ROW_PITCH + (mx) * 16 + g + (8 * (c) + t) * C; \
		ah_[0] = __float_as_uint(s_[0]); \
		ah_[1] = __float_as_uint(s_[8]); \
		ah_[2] = __float_as_uint(s_[4 * C]); \
		ah_[3] = __float_as_uint(s_[8 + 4 * C]); \
	}
#endif

// PRODUCTS adds the products of the A fragment just loaded and weights bw
// (a float4: hi, hi, lo, lo) to accumulator d: the small ones first.
#if IN_SPLIT
#define PRODUCTS(d, bw) \
	do { \
		const unsigned bh0_ = __float_as_uint((bw).x), bh1_ = __float_as_uint((bw).y); \
		mma((d), al_[0], al_[1], al_[2], al_[3], bh0_, bh1_); \
		mma((d), ah_[0], ah_[1], ah_[2], ah_[3], __float_as_uint((bw).z), __float_as_uint((bw).w)); \
		mma((d), ah_[0], ah_[1], ah_[2], ah_[3], bh0_, bh1_); \
	} while (0)
#else
#define PRODUCTS(d, bw) \
	do { \
		mma((d), ah_[0], ah_[1], ah_[2], ah_[3], __float_as_uint((bw).z), __float_as_uint((bw).w)); \
		mma((d), ah_[0], ah_[1], ah_[2], ah_[3], __float_as_uint((bw).x), __float_as_uint((bw).y)); \
	} while (0)
#endif

#if F16
// H_FRAG loads half an A fragment (the 8 taps of one kernel row) of
// m-tile mx, chunk c from tile row `row` into h[2]: pairs (g, 2t..2t+1),
// (g+8, 2t..2t+1); H_ZERO is the padding row's.
#define H_FRAG(h, row, mx, c) \
	do { \
		LOCAL_PTR const TILE_T* s_ = tile + (row) * ROW_PITCH + (mx) * 16 + g + (8 * (c) + 2 * t) * C; \
		(h)[0] = s_[0]; \
		(h)[1] = s_[8]; \
	} while (0)
#define H_ZERO(h) \
	do { \
		(h)[0] = 0u; \
		(h)[1] = 0u; \
	} while (0)
// PRODUCTS16 adds the products of kernel rows (h0, h1) and weights bw to
// d: lo first.
#define PRODUCTS16(d, h0, h1, bw) \
	do { \
		mma16((d), (h0)[0], (h0)[1], (h1)[0], (h1)[1], __float_as_uint((bw).z), __float_as_uint((bw).w)); \
		mma16((d), (h0)[0], (h0)[1], (h1)[0], (h1)[1], __float_as_uint((bw).x), __float_as_uint((bw).y)); \
	} while (0)
#endif

// With MIN_BLOCKS 0, no blocks-per-multiprocessor hint: on the H100,
// __launch_bounds__(THREADS, 1) made S000's bank of 8 26 % slower
// (docs/perf/gemm.md, call 3).
#if MIN_BLOCKS > 0
#define GEMM_BOUNDS __launch_bounds__(THREADS, MIN_BLOCKS)
#else
#define GEMM_BOUNDS __launch_bounds__(THREADS)
#endif
extern "C" __global__ void GEMM_BOUNDS correlate_gemm(
	__global const IN_T* restrict in,
	__global OUT_T* restrict out,
	__global const float4* restrict taps,
	__constant int* restrict outer,
	const long in_y, const long in_x, // input Y length, X length in pixels
	const long out_y, const long out_x, // output lengths
	const long planes, // number of output outer planes
	const ACC_T cval)
{
	__shared__ TILE_T tiles[STAGES][TILE_ROWS * ROW_PITCH];
#if STAGES == 2
	// The input plane of each outer tap (outer_plane's divisions once per
	// plane, not per tap and value).
	__shared__ long srcs[OUTER_TAPS];
#endif
	const long out_row = out_x * C;
	const long out_plane = out_y * out_row;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int g = lane >> 2, t = lane & 3;
	const int wn = warp % WARPS_N, wy = warp / WARPS_N;
	const long x_tiles = (out_row + TILE_X - 1) / TILE_X;
	const int group = (int)(blockIdx.x / x_tiles);
	const long e0 = (long)(blockIdx.x % x_tiles) * TILE_X; // first output element of the tile
	const long y0 = (long)blockIdx.y * TILE_Y;
	const int nt0 = group * NT + wn * NTW; // the warp's first n-tile of the padded bank
#if STAGES == 2
	const long in_plane = in_y * in_x * C;
	int off[STAGE_N];
	unsigned outside_yx; // the values the border makes cval in every plane
	stage_offsets(y0, e0, in_y, in_x, off, &outside_yx);
#endif

	for (long plane = blockIdx.z; plane < planes; plane += gridDim.z) {
		float acc[RY][MX][NTW][4];
#pragma unroll
		for (int r = 0; r < RY; r++) {
#pragma unroll
			for (int mx = 0; mx < MX; mx++) {
#pragma unroll
				for (int n = 0; n < NTW; n++) {
#pragma unroll
					for (int q = 0; q < 4; q++) {
						acc[r][mx][n][q] = 0.0f;
					}
				}
			}
		}
#if STAGES == 2
		// Double-buffered: tap ot + 1's values are loaded (raw, into
		// registers) before tap ot's products and stored into the other
		// tile after them, one barrier per tap.
		__syncthreads(); // the last plane's readers of srcs are done
		for (int i = threadIdx.x; i < OUTER_TAPS; i += THREADS) {
			srcs[i] = outer_plane(outer, plane, i);
		}
		__syncthreads();
		IN_T pre[STAGE_N];
		long src = srcs[0];
		stage_fetch(in, src, in_plane, off, pre);
		stage_put(tiles[0], pre, src < 0 ? ~0u : outside_yx, cval);
		__syncthreads();
#endif
		for (int ot = 0; ot < OUTER_TAPS; ot++) {
#if STAGES == 2
			LOCAL_PTR TILE_T* tile = tiles[ot & 1];
			if (ot + 1 < OUTER_TAPS) {
				src = srcs[ot + 1];
				stage_fetch(in, src, in_plane, off, pre);
			}
#else
			LOCAL_PTR TILE_T* tile = tiles[0];
			const long src = outer_plane(outer, plane, ot);
			__syncthreads(); // the last tap's readers are done
			// Stage rows y0 − SHIFT_Y …, elements e0 − SHIFT_X·C …, mapped
			// by the border rule.
			for (int i = threadIdx.x; i < TILE_ROWS * ROW_ELEMS; i += THREADS) {
				const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
				const long py = y0 + r - SHIFT_Y;
				const long pe = e0 + q - SHIFT_X * C;
				const long px = position_of(pe);
				const float v = load_sample(in, src, py, px, pe - px * C, in_y, in_x, cval);
				tile[r * ROW_PITCH + q] = v;
			}
			__syncthreads();
#endif
			__global const float4* w = taps + ((long)ot * KROWS * KCH * NT_ALL + nt0) * 32 + lane;
			const int row0 = wy * RY; // the warp's first output row in the tile
#if F16
			float4 b[KROWS][KCH][NTW];
#pragma unroll
			for (int p = 0; p < KROWS; p++) {
#pragma unroll
				for (int c = 0; c < KCH; c++) {
#pragma unroll
					for (int n = 0; n < NTW; n++) {
						b[p][c][n] = w[((p * KCH + c) * NT_ALL + n) * 32];
					}
				}
			}
			// Rows i and i + 1 feed output row r through the kernel-row
			// pair p = (i − r)/2 where i − r is even; each row's half
			// fragment is loaded once (row RY + KY − 1 only pads: zero).
			unsigned hf[RY + KY][KCH][MX][2];
#pragma unroll
			for (int i = 0; i < RY + KY - 1; i++) {
#pragma unroll
				for (int c = 0; c < KCH; c++) {
#pragma unroll
					for (int mx = 0; mx < MX; mx++) {
						if (i == 0) {
							H_FRAG(hf[0][c][mx], row0, mx, c);
						}
						if (i + 1 < RY + KY - 1) {
							H_FRAG(hf[i + 1][c][mx], row0 + i + 1, mx, c);
						} else {
							H_ZERO(hf[i + 1][c][mx]);
						}
#pragma unroll
						for (int r = 0; r < RY; r++) {
							const int jy = i - r;
							if (jy >= 0 && jy < KY && jy % 2 == 0) {
#pragma unroll
								for (int n = 0; n < NTW; n++) {
									PRODUCTS16(acc[r][mx][n], hf[i][c][mx], hf[i + 1][c][mx], b[jy / 2][c][n]);
								}
							}
						}
					}
				}
			}
#elif B_HELD
			float4 b[KY][KCH][NTW];
#pragma unroll
			for (int jy = 0; jy < KY; jy++) {
#pragma unroll
				for (int c = 0; c < KCH; c++) {
#pragma unroll
					for (int n = 0; n < NTW; n++) {
						b[jy][c][n] = w[((jy * KCH + c) * NT_ALL + n) * 32];
					}
				}
			}
			// Input row i feeds output row r through kernel row i − r:
			// each output takes its rows in order.
#pragma unroll
			for (int i = 0; i < RY + KY - 1; i++) {
#pragma unroll
				for (int c = 0; c < KCH; c++) {
#pragma unroll
					for (int mx = 0; mx < MX; mx++) {
						A_FRAG(row0 + i, mx, c)
#pragma unroll
						for (int r = 0; r < RY; r++) {
							const int jy = i - r;
							if (jy >= 0 && jy < KY) {
#pragma unroll
								for (int n = 0; n < NTW; n++) {
									PRODUCTS(acc[r][mx][n], b[jy][c][n]);
								}
							}
						}
					}
				}
			}
#else
			for (int jy = 0; jy < KY; jy++) {
#pragma unroll
				for (int c = 0; c < KCH; c++) {
					float4 b[NTW];
#pragma unroll
					for (int n = 0; n < NTW; n++) {
						b[n] = w[((jy * KCH + c) * NT_ALL + n) * 32];
					}
#pragma unroll
					for (int r = 0; r < RY; r++) {
#pragma unroll
						for (int mx = 0; mx < MX; mx++) {
							A_FRAG(row0 + r + jy, mx, c)
#pragma unroll
							for (int n = 0; n < NTW; n++) {
								PRODUCTS(acc[r][mx][n], b[n]);
							}
						}
					}
				}
			}
#endif
#if STAGES == 2
			if (ot + 1 < OUTER_TAPS) {
				stage_put(tiles[(ot + 1) & 1], pre, src < 0 ? ~0u : outside_yx, cval);
			}
			__syncthreads();
#endif
		}
		// Accumulator q of (r, mx, n) is output element e0 + 16·mx + g (+8
		// for q ≥ 2) of row y0 + row0 + r, kernel 8·(nt0 + n) + 2t (+1 for
		// odd q).
#if F16
		// The scales 2^−s of the thread's kernels (exact products).
		float scale[NTW][2];
#pragma unroll
		for (int n = 0; n < NTW; n++) {
			__global const float* sc = (__global const float*)(taps + SCALE_AT) + 8 * (nt0 + n) + 2 * t;
			scale[n][0] = sc[0];
			scale[n][1] = sc[1];
		}
#define ACC_OUT(r, mx, n, q) (acc[r][mx][n][q] * scale[n][(q) & 1])
#else
#define ACC_OUT(r, mx, n, q) acc[r][mx][n][q]
#endif
#pragma unroll
		for (int r = 0; r < RY; r++) {
			const long y = y0 + wy * RY + r;
			if (y >= out_y) {
				continue;
			}
#pragma unroll
			for (int mx = 0; mx < MX; mx++) {
#pragma unroll
				for (int h = 0; h < 2; h++) {
					const long e = e0 + 16 * mx + g + 8 * h;
					if (e >= out_row) {
						continue;
					}
					__global OUT_T* o = out + (plane * out_plane + y * out_row + e) * BANK;
#pragma unroll
					for (int n = 0; n < NTW; n++) {
						const int k = 8 * (nt0 + n) + 2 * t;
#if OUT_PAIR
						// float output, an even bank: the pair in one store.
						if (k < BANK) {
							*(float2*)(o + k) = make_float2(ACC_OUT(r, mx, n, 2 * h), ACC_OUT(r, mx, n, 2 * h + 1));
						}
						continue;
#endif
						if (k < BANK) {
							o[k] = to_output(ACC_OUT(r, mx, n, 2 * h));
						}
						if (k + 1 < BANK) {
							o[k + 1] = to_output(ACC_OUT(r, mx, n, 2 * h + 1));
						}
					}
				}
			}
		}
	}
}
#undef ACC_OUT
