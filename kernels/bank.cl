// bank.cl: direct correlation by a bank of small kernels, written for the
// cost such a bank has: its output. A bank of K kernels writes K values per
// input value read (2048², 64 kernels of 3×3: 1 GiB out for 16 MiB in), so
// the kernel is as fast as its stores are whole. Same canonical form,
// arguments and results as direct.cl and tiled.cl:
//
//   input  [outer planes…][Y][X·C]   output [outer…][Y'][X'·C][BANK]
//
// A work-group of KL × NCOL work-items computes a tile of TILE_Y rows by
// TILE_X elements of one outer plane, for every kernel of the bank. Work-item
// lid is kernel lane lid % KL of column lid / KL: it holds the weights of
// kernels lane, lane + KL, …, (KPL of them, KL · KPL = BANK) in registers,
// and walks down the tile's columns col, col + NCOL, …, one output row at a
// time. Consecutive work-items thus write consecutive values of the
// interleaved output — a whole line per warp and store where KL ≥ 32, else
// the BANK values of 32 / KL neighbouring elements — and read the same
// staged input value (one broadcast) or neighbouring ones.
//
// The walk keeps a window of the KY rows of KX values (per outer tap) that
// the current output row reads, in registers: each step reads one new row's
// values from local memory and drops the oldest, the loop unrolled by KY so
// that every slot is a register. All outer taps' planes are staged at once
// (the kernels this family serves are small: the host bounds the window and
// weights to registers).
//
// Order of operations: each output is one accumulator receiving its taps in
// the kernel's row-major order — outer taps, then rows jy, then jx — one
// correctly rounded fma each, zero weights skipped: the bits of every other
// engine.
//
// Defines: those of direct.cl (IN_T, OUT_T, ACC_T, OUT_INTEGER, OUT_MIN,
// OUT_MAX, BORDER, BANK, KY, KX, SHIFT_Y, SHIFT_X, C, NOUTER, OUTER_TAPS,
// TILE_X, TILE_Y) and KL, KPL, NCOL (above), IDX32, TAPS_N, TAPS_IN_PARAMS,
// ALL_NONZERO, or TAPS_KNOWN with TZ0…TZ3 and TN0…TN3 (see BANK_ADD).

#define GROUP_SIZE (KL * NCOL)
#define HALO_X ((KX - 1) * C)
#define ROW_ELEMS (TILE_X + HALO_X)
#define TILE_ROWS (TILE_Y + KY - 1)
#define PLANE_ELEMS (TILE_ROWS * ROW_ELEMS)
#define NTAPS (OUTER_TAPS * KY * KX)

// BANK_ADD(i, acc, w, v) adds tap i's product to acc: one fma where the
// tap is nonzero in every kernel, nothing where it is zero in every
// kernel, and where that differs between kernels a test of the lane's
// weight (accumulate) — the host's bitmaps TZ (zero in all) and TN
// (nonzero in all) decide at compile time, every index being a constant.
#if ALL_NONZERO
#define BANK_ADD(i, acc, w, v) fma_rn((w), (v), (acc))
#elif TAPS_KNOWN
#define TAP_BIT(W, i) ((((i) < 64 ? W##0 : (i) < 128 ? W##1 : (i) < 192 ? W##2 : W##3) >> ((i) % 64)) & 1)
#define BANK_ADD(i, acc, w, v) (TAP_BIT(TZ, i) ? (acc) : TAP_BIT(TN, i) ? fma_rn((w), (v), (acc)) : accumulate((acc), (w), (v)))
#else
#define BANK_ADD(i, acc, w, v) accumulate((acc), (w), (v))
#endif

#if defined(__CUDACC__)
#define BANK_BOUNDS __launch_bounds__(GROUP_SIZE)
#else
#define BANK_BOUNDS
#endif

// LOAD_ROW puts row r of every staged plane — the KX values element ex of
// the tile reads there — into window slot s.
#define LOAD_ROW(win, tile, s, r, ex) \
	do { \
		_Pragma("unroll") for (int t_ = 0; t_ < OUTER_TAPS; t_++) { \
			_Pragma("unroll") for (int jx_ = 0; jx_ < KX; jx_++) { \
				(win)[t_][s][jx_] = (tile)[t_ * PLANE_ELEMS + (r) * ROW_ELEMS + (ex) + jx_ * C]; \
			} \
		} \
	} while (0)

__kernel void BANK_BOUNDS correlate_bank(DIRECT_PARAMS)
{
	DIRECT_SIZES;
	const int lid = (int)get_local_id(0);
	const int lane = lid % KL, col = lid / KL;
	const idx_t e0 = (idx_t)get_group_id(0) * TILE_X; // first output element of the tile
	const idx_t y0 = (idx_t)get_group_id(1) * TILE_Y;
	const idx_t fy0 = y0 - SHIFT_Y, fe0 = e0 - SHIFT_X * C; // the tile's input footprint
	const int inside_yx = fy0 >= 0 && fy0 + TILE_ROWS <= in_y && fe0 >= 0 && fe0 + ROW_ELEMS <= in_row;
	const int rows = (int)min((idx_t)TILE_Y, out_y - y0);
	__local ACC_T tile[OUTER_TAPS * PLANE_ELEMS];

	// This work-item's weights, tap-major as the taps argument has them.
	ACC_T w[KPL][NTAPS];
#pragma unroll
	for (int m = 0; m < KPL; m++) {
#pragma unroll
		for (int i = 0; i < NTAPS; i++) {
			w[m][i] = TAP(i * BANK + lane + KL * m);
		}
	}

	for (idx_t plane = (idx_t)get_group_id(2); plane < planes; plane += (idx_t)get_num_groups(2)) {
		// Stage every outer tap's plane of the footprint, converted once.
		for (int t = 0; t < OUTER_TAPS; t++) {
			const idx_t src = (idx_t)outer_plane(outer, plane, t);
			LOCAL_PTR ACC_T* dst = tile + t * PLANE_ELEMS;
			if (inside_yx && src >= 0) {
				__global const IN_T* base = in + (src * in_y + fy0) * in_row + fe0;
				for (int i = lid; i < PLANE_ELEMS; i += GROUP_SIZE) {
					const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
					dst[i] = to_acc(base[(idx_t)r * in_row + q]);
				}
			} else {
#if BORDER == BORDER_CONSTANT
				// Outside is a compare and cval: mapping every element
				// costs no more than splitting the footprint (call 9:
				// 0.498 against 0.510 ms on the 256³ bank of 16).
				for (int i = lid; i < PLANE_ELEMS; i += GROUP_SIZE) {
					const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
					const idx_t pe = fe0 + q;
					const idx_t px = position_of(pe);
					dst[i] = load_sample(in, src, fy0 + r, px, pe - px * C, in_y, in_x, cval);
				}
#else
				stage_edge(dst, ROW_ELEMS, 0, TILE_ROWS, ROW_ELEMS, GROUP_SIZE, in, src, fy0, fe0, in_y, in_x, lid, cval);
#endif
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);

		for (int ex = col; ex < TILE_X && e0 + ex < out_row; ex += NCOL) {
			__global OUT_T* o = out + ((plane * out_y + y0) * out_row + e0 + ex) * BANK + lane;
			ACC_T win[OUTER_TAPS][KY][KX];
#pragma unroll
			for (int s = 0; s < KY - 1; s++) {
				LOAD_ROW(win, tile, s, s, ex);
			}
			for (int r0 = 0; r0 < rows; r0 += KY) {
#pragma unroll
				for (int u = 0; u < KY; u++) {
					const int r = r0 + u;
					if (r < rows) {
						// Output row r reads rows r … r + KY − 1: the
						// newest into the slot the oldest leaves.
						LOAD_ROW(win, tile, (u + KY - 1) % KY, r + KY - 1, ex);
#pragma unroll
						for (int m = 0; m < KPL; m++) {
							ACC_T acc = (ACC_T)0;
#pragma unroll
							for (int t = 0; t < OUTER_TAPS; t++) {
#pragma unroll
								for (int jy = 0; jy < KY; jy++) {
#pragma unroll
									for (int jx = 0; jx < KX; jx++) {
										const int i = (t * KY + jy) * KX + jx;
										acc = BANK_ADD(i, acc, w[m][i], win[t][(u + jy) % KY][jx]);
									}
								}
							}
							o[(idx_t)r * out_row * BANK + KL * m] = to_output(acc);
						}
					}
				}
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}
