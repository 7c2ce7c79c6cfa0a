// rows.cl: direct correlation of images with small kernels by work-items
// that walk down their columns, with no local memory and no barriers: the
// implementation for problems whose cost is moving bytes and converting
// them (uint8 3×3), where tiled.cl's staging, barriers and per-tile set-up
// cost more instructions than the taps. Same canonical form, arguments and
// results as direct.cl, for problems whose outer axes the kernel does not
// span (OUTER_TAPS = 1: images and batches of them).
//
// Each work-item owns RX consecutive output elements of a row and walks a
// chunk of output rows (the chunk length is outer[4·NOUTER], a run-time
// value). It reads each input row it needs once, RX + (KX − 1)·C values
// straight from global memory (neighbours' overlapping reads hit the L1
// cache), converts them once, and adds them into the KY output rows that
// read that row: slot j of its accumulators holds output row v − (KY−1) + j
// while input row v is added, which takes kernel row KY − 1 − j from it;
// after row v, slot 0 is complete, is stored, and the slots shift down
// (tiled.cl's correlate_rolling, one row at a time). Each output receives
// its kernel rows in order and within each its taps in order: the same
// bits as every other engine. A chunk's first KY − 1 rows also feed rows
// before the chunk, which are dropped.
//
// With L2_AHEAD > 0, each work-item also asks for the input it will read
// L2_AHEAD rows later in the L2 cache (prefetch_l2): uint8 3×3 keeps too few
// bytes in flight per multiprocessor for DRAM's latency when every load
// needs its registers (ncu: long-scoreboard stalls, DRAM 36%), and a
// prefetch holds none.
//
// Defines: those of direct.cl and TX (work-items per group), RX (outputs
// per work-item), L2_AHEAD, IDX32, ALL_NONZERO or NZ0…NZ3, TAPS_N, TAPS_IN_PARAMS,
// VECTOR_LOADS and IN_T4 (the RX middle values of each row read as
// 4-vectors: RX % 4 = 0 and input rows 4-aligned), VECTOR_STORES and
// OUT_T4.

// The input values a work-item reads per row.
#define SPAN (RX + (KX - 1) * C)


// load_row reads the SPAN input values input row v (of plane src, −1 for
// a plane wholly outside) gives this work-item, converted to ACC_T: straight
// where they lie inside the row (inside_x), else by the border rule.
INLINE void load_row(ACC_T x[SPAN], __global const IN_T* restrict in, idx_t src, idx_t v, idx_t fe, idx_t e,
	int inside_x, idx_t in_y, idx_t in_x, ACC_T cval)
{
	const idx_t in_row = in_x * C;
	const idx_t py = v - SHIFT_Y; // input row v's position
#if BORDER == BORDER_CONSTANT
	if (src < 0 || !inside(py, in_y)) {
#pragma unroll
		for (int q = 0; q < SPAN; q++) {
			x[q] = cval;
		}
	} else
#endif
	{
#if BORDER == BORDER_CONSTANT
		__global const IN_T* row = in + (src * in_y + py) * in_row;
#else
		__global const IN_T* row = in + (src * in_y + (idx_t)border_index(py, in_y)) * in_row;
#endif
		if (inside_x) {
#if VECTOR_LOADS
#pragma unroll
			for (int q = 0; q < SHIFT_X * C; q++) {
				x[q] = to_acc(row[fe + q]);
			}
#pragma unroll
			for (int m = 0; m < RX / 4; m++) {
				const IN_T4 w4 = LOAD4_IN(row + e + 4 * m);
				x[SHIFT_X * C + 4 * m] = to_acc(w4.x);
				x[SHIFT_X * C + 4 * m + 1] = to_acc(w4.y);
				x[SHIFT_X * C + 4 * m + 2] = to_acc(w4.z);
				x[SHIFT_X * C + 4 * m + 3] = to_acc(w4.w);
			}
#pragma unroll
			for (int q = SHIFT_X * C + RX; q < SPAN; q++) {
				x[q] = to_acc(row[fe + q]);
			}
#else
#pragma unroll
			for (int q = 0; q < SPAN; q++) {
				x[q] = to_acc(row[fe + q]);
			}
#endif
		} else {
#pragma unroll
			for (int q = 0; q < SPAN; q++) {
				const idx_t pe = fe + q;
				const idx_t px = position_of(pe);
				const idx_t ch = pe - px * C;
#if BORDER == BORDER_CONSTANT
				x[q] = inside(px, in_x) ? to_acc(row[px * C + ch]) : cval;
#else
				x[q] = to_acc(row[(idx_t)border_index(px, in_x) * C + ch]);
#endif
			}
		}
	}
}

__kernel void correlate_rows(DIRECT_PARAMS)
{
	DIRECT_SIZES;
	const idx_t e = ((idx_t)get_group_id(0) * TX + (idx_t)get_local_id(0)) * RX; // first output element
	if (e >= out_row) {
		return; // no barriers below
	}
	const idx_t chunk = outer[4 * NOUTER];
	const idx_t y0 = (idx_t)get_group_id(1) * chunk;
	const idx_t y1 = min(y0 + chunk, out_y);
	const idx_t fe = e - SHIFT_X * C; // first input element read
	const int inside_x = fe >= 0 && fe + SPAN <= in_row;
	const int full = e + RX <= out_row;

	for (idx_t plane = (idx_t)get_group_id(2); plane < planes; plane += (idx_t)get_num_groups(2)) {
		const idx_t src = (idx_t)outer_plane(outer, plane, 0);
		ACC_T acc[KY][RX][BANK];
#pragma unroll
		for (int j = 0; j < KY; j++) {
#pragma unroll
			for (int rx = 0; rx < RX; rx++) {
#pragma unroll
				for (int k = 0; k < BANK; k++) {
					acc[j][rx][k] = (ACC_T)0;
				}
			}
		}
		for (idx_t v = y0; v < y1 + KY - 1; v++) {
#if L2_AHEAD > 0
			// The row read L2_AHEAD rows on (the border rules map rows
			// only near the edges: those go unprefetched).
			const idx_t pv = v + L2_AHEAD - SHIFT_Y;
			if (inside_x && src >= 0 && pv < in_y && pv >= 0) {
				prefetch_l2(in + (src * in_y + pv) * in_row + fe);
			}
#endif
			ACC_T x[SPAN];
			load_row(x, in, src, v, fe, e, inside_x, in_y, in_x, cval);
#pragma unroll
			for (int jx = 0; jx < KX; jx++) {
#pragma unroll
				for (int j = 0; j < KY; j++) {
#pragma unroll
					for (int k = 0; k < BANK; k++) {
						const int wi = ((KY - 1 - j) * KX + jx) * BANK + k;
						const ACC_T w = TAP(wi);
						if (NONZERO(wi, w)) {
#pragma unroll
							for (int rx = 0; rx < RX; rx++) {
								acc[j][rx][k] = fma_rn(w, x[rx + jx * C], acc[j][rx][k]);
							}
						}
					}
				}
			}
			// Slot 0 holds output row v − (KY − 1), now complete.
			const idx_t y = v - (KY - 1);
			if (y >= y0) {
				__global OUT_T* o = out + ((plane * out_y + y) * out_row + e) * BANK;
#if VECTOR_STORES
				if (full) {
#pragma unroll
					for (int q = 0; q < RX * BANK; q += 4) {
						OUT_T4 w4;
						w4.x = to_output(acc[0][q / BANK][q % BANK]);
						w4.y = to_output(acc[0][(q + 1) / BANK][(q + 1) % BANK]);
						w4.z = to_output(acc[0][(q + 2) / BANK][(q + 2) % BANK]);
						w4.w = to_output(acc[0][(q + 3) / BANK][(q + 3) % BANK]);
						STORE4(o + q, w4);
					}
				} else
#endif
				{
#pragma unroll
					for (int rx = 0; rx < RX; rx++) {
						if (full || e + rx < out_row) {
#pragma unroll
							for (int k = 0; k < BANK; k++) {
								o[rx * BANK + k] = to_output(acc[0][rx][k]);
							}
						}
					}
				}
			}
#pragma unroll
			for (int j = 0; j < KY; j++) {
#pragma unroll
				for (int rx = 0; rx < RX; rx++) {
#pragma unroll
					for (int k = 0; k < BANK; k++) {
						acc[j][rx][k] = j + 1 < KY ? acc[j + 1][rx][k] : (ACC_T)0;
					}
				}
			}
		}
	}
}
