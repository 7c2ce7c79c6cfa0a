// sepring.cl: the last two passes of a separable correlation — along X
// (the last kernel axis, C interleaved samples after it) and along Y (the
// axis before it) — fused as sepfused.cl fuses them, for kernels of many
// taps: the same strips walking down the rows, the same order of
// operations and so the same bits, with more arithmetic per value read
// from local memory and a barrier per KY rows instead of per row.
//
//   input [planes][NY][NX·C]  →  output [planes][MY][MX·C] (element i stored
//   at out[i·stride + offset], so a bank's last pass interleaves)
//
// A work-group owns a strip of W output elements (one column per
// work-item: W = TX) of SEG output rows of one plane, and walks it in
// rounds of KY steps (the Y ring's period). A round:
//
//  1. stages its KY input rows with their X halo in local memory
//     (coalesced reads, converted once; rows wholly outside the constant
//     border are not read) — the previous round stages them, after its Y
//     pass, or with PREFETCH reads them into registers before its Y pass
//     (their loads in flight while it computes, at the cost of KY·NLOAD
//     registers) and stores them after;
//  2. the X pass: KY rows × W/RX pieces of RX consecutive elements, spread
//     over the work-items with consecutive work-items on consecutive rows
//     (an odd row pitch makes their local reads conflict-free); each piece
//     reads its RX + (KX − 1)·C values once and streams them into its RX
//     sums, one fma per tap, taps in order. The KY intermediate rows go to
//     local memory;
//  3. the Y pass: each work-item reads its column's KY intermediate values
//     in step order and adds each into the KY outputs in progress (a ring
//     of KY registers indexed by compile-time constants, as in
//     sepfused.cl); the output whose last tap arrives is stored — one
//     coalesced row per step — and its slot cleared.
//
// Order of operations (the CPU's separable method exactly): each
// intermediate value is its X taps in order from zero, one fma each, in
// ACC_T; each output takes its Y taps jy = 0, 1, … in order. Intermediate
// rows outside the input along Y with the constant border are CVAL2
// (cval times the X factor's sum, rounded once); along X the X pass reads
// cval.
//
// Why: sepfused.cl reads RX + KX − 1 local values per RX intermediate
// values and keeps KY·RX sums in registers, so for 31 taps it either reads
// local memory once per fma (RX = 1) or runs at a quarter of the
// occupancy (RX = 2: 119 registers), with a barrier per row. Here the Y
// ring costs KY registers whatever RX is, so RX can be large.
//
// Defines: IN_T, OUT_T, ACC_T (ACC_DOUBLE), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, KX, KY, SHIFT_X, SHIFT_Y, C, TX (work-items = strip width W),
// RX (X-pass outputs per piece, dividing TX), SEG (output rows per strip:
// SEG + KY − 1 is a whole number of rounds), STAGE_PITCH and INTER_PITCH
// (local row pitches, ≡ 1 mod 32), PREFETCH, IDX32, TAPS_N, TAPS_IN_PARAMS,
// ALL_NONZERO or NZ0…NZ3. The weights are the X factor's KX, then the Y
// factor's KY, then CVAL2.

#define W TX
#define HALO_X ((KX - 1) * C)
#define STAGE_ELEMS (W + HALO_X)
#define SPAN (RX + HALO_X)
#define PIECES (W / RX)
#define TASKS (KY * PIECES)
// Output o is complete at step o + KY − 1: SEG + KY − 1 steps, in whole
// rounds (the last round's extra steps store nothing).
#define ROUNDS ((SEG + 2 * KY - 2) / KY)
// The staged values each work-item loads per row, and its X-pass pieces.
#define NLOAD ((STAGE_ELEMS + TX - 1) / TX)
#define NTASK ((TASKS + TX - 1) / TX)


// fetch_rows reads this work-item's values of the KY input rows from py0
// on, with their X halo by the border rule, into v (rows wholly outside
// the constant border are not read: the X pass writes CVAL2 for them).
INLINE void fetch_rows(ACC_T v[KY][NLOAD], __global const IN_T* restrict src, idx_t py0, int lx,
	idx_t fe0, int inside_x, idx_t ny, idx_t nx, idx_t in_row, ACC_T cval)
{
#pragma unroll
	for (int r = 0; r < KY; r++) {
		const idx_t py = py0 + r;
		if (has_value(py, ny)) {
#if BORDER == BORDER_CONSTANT
			__global const IN_T* line = src + py * in_row;
#else
			__global const IN_T* line = src + (idx_t)border_index(py, ny) * in_row;
#endif
#pragma unroll
			for (int m = 0; m < NLOAD; m++) {
				const int q = lx + m * TX;
				if (q < STAGE_ELEMS) {
					if (inside_x) {
						v[r][m] = to_acc(line[fe0 + q]);
					} else {
						const idx_t pe = fe0 + q;
						const idx_t px = position_of(pe);
						const idx_t c = pe - px * C;
#if BORDER == BORDER_CONSTANT
						v[r][m] = (px >= 0 && px < nx) ? to_acc(line[px * C + c]) : cval;
#else
						v[r][m] = to_acc(line[(idx_t)border_index(px, nx) * C + c]);
#endif
					}
				}
			}
		}
	}
}

// store_rows puts fetch_rows' values in the staged rows.
INLINE void store_rows(LOCAL_PTR ACC_T* stage, ACC_T v[KY][NLOAD], int lx)
{
#pragma unroll
	for (int r = 0; r < KY; r++) {
#pragma unroll
		for (int m = 0; m < NLOAD; m++) {
			const int q = lx + m * TX;
			if (q < STAGE_ELEMS) {
				stage[r * STAGE_PITCH + q] = v[r][m];
			}
		}
	}
}

__kernel void correlate_sepring(FUSED_PASS_PARAMS)
{
	const idx_t ny = (idx_t)ny_, nx = (idx_t)nx_, my = (idx_t)my_, mx = (idx_t)mx_;
	const idx_t planes = (idx_t)planes_, stride = (idx_t)stride_, offset = (idx_t)offset_;
	const idx_t in_row = nx * C, out_row = mx * C;
	const int lx = (int)get_local_id(0);
	const idx_t e0 = (idx_t)get_group_id(0) * W;
	const idx_t y0 = (idx_t)get_group_id(1) * SEG;
	const idx_t fe0 = e0 - SHIFT_X * C; // first input element of the staged rows
	const int inside_x = fe0 >= 0 && fe0 + STAGE_ELEMS <= in_row;
	const ACC_T cval2 = TAP(KX + KY);
	__local ACC_T stage[KY * STAGE_PITCH];
	__local ACC_T inter[KY * INTER_PITCH];

	for (idx_t plane = (idx_t)get_group_id(2); plane < planes; plane += (idx_t)get_num_groups(2)) {
		__global const IN_T* src = in + plane * ny * in_row;
		ACC_T acc[KY];
#pragma unroll
		for (int q = 0; q < KY; q++) {
			acc[q] = (ACC_T)0;
		}
		// 1. Stage round 0's rows; each round stages the next one's.
		{
			ACC_T rows[KY][NLOAD];
			fetch_rows(rows, src, y0 - SHIFT_Y, lx, fe0, inside_x, ny, nx, in_row, cval);
			store_rows(stage, rows, lx);
		}
#pragma unroll 1
		for (int round = 0; round < ROUNDS; round++) {
			// The round's first input row.
			const idx_t py0 = y0 - SHIFT_Y + (idx_t)round * KY;
			barrier(CLK_LOCAL_MEM_FENCE); // the round's rows are staged

			// 2. The X pass: piece p of row r is task r + p·KY.
#pragma unroll
			for (int n = 0; n < NTASK; n++) {
				const int t = lx + n * TX;
				if (TASKS % TX == 0 || t < TASKS) {
					const int r = t % KY, p = t / KY;
					LOCAL_PTR const ACC_T* row = stage + r * STAGE_PITCH + p * RX;
					LOCAL_PTR ACC_T* dst = inter + r * INTER_PITCH + p * RX;
					if (has_value(py0 + r, ny)) {
						X_PIECE(row, dst);
					} else {
#pragma unroll
						for (int rx = 0; rx < RX; rx++) {
							dst[rx] = cval2;
						}
					}
				}
			}
			barrier(CLK_LOCAL_MEM_FENCE);

#if PREFETCH
			// The next round's loads are in flight during the Y pass.
			ACC_T next[KY][NLOAD];
			if (round + 1 < ROUNDS) {
				fetch_rows(next, src, py0 + KY, lx, fe0, inside_x, ny, nx, in_row, cval);
			}
#endif
			// 3. The Y pass down this work-item's column: step u of the
			// round is strip step s = round·KY + u; output o = s − jy takes
			// tap jy in slot (u − jy) mod KY. Outputs before the strip
			// (o < 0) or after it (o ≥ SEG) gather values too, in slots
			// that are never stored and are cleared before their next use.
			const idx_t e = e0 + lx;
#pragma unroll
			for (int u = 0; u < KY; u++) {
				const ACC_T v = inter[u * INTER_PITCH + lx];
#pragma unroll
				for (int jy = 0; jy < KY; jy++) {
					const int slot = (u - jy + KY) % KY;
					const ACC_T w = TAP(KX + jy);
					if (NONZERO(KX + jy, w)) {
						acc[slot] = fma_rn(w, v, acc[slot]);
					}
				}
				// Output s − (KY − 1) has all its taps: store it.
				{
					const int slot = (u + 1) % KY;
					const int o = round * KY + u - (KY - 1);
					const idx_t y = y0 + o;
					if (o >= 0 && o < SEG && y < my && e < out_row) {
						out[((plane * my + y) * out_row + e) * stride + offset] = to_output(acc[slot]);
					}
					acc[slot] = (ACC_T)0;
				}
			}
			// 4. Stage the next round's rows: every work-item's X pass has
			// read this round's (the barrier above); the next X pass writes
			// the intermediate rows after the barrier at the loop's top,
			// once every Y pass has read them.
			if (round + 1 < ROUNDS) {
#if PREFETCH
				store_rows(stage, next, lx);
#else
				ACC_T rows[KY][NLOAD];
				fetch_rows(rows, src, py0 + KY, lx, fe0, inside_x, ny, nx, in_row, cval);
				store_rows(stage, rows, lx);
#endif
			}
		}
		// The next plane's first round writes where this plane's last was read.
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}
