// septile.cl: the last two passes of a separable correlation — along X
// (the last kernel axis, C interleaved samples after it) and along Y (the
// axis before it) — fused into one kernel for SMALL images: each
// work-group filters one 2-D tile whole, where sepfused.cl's work-groups
// walk strips row by row. On an image of a few hundred thousand outputs a
// strip's serial steps (each a staged row behind barriers) are what the
// time is made of; a tile is staged in one phase, with all its loads in
// flight at once, and spread over many more work-groups.
//
//   input [planes][NY][NX·C]  →  output [planes][MY][MX·C] (element i
//   stored at out[i·stride + offset], so a bank's kernels interleave)
//
// A work-group of TX × TY work-items owns a tile of TX output elements by
// TILE_H = TY·RY output rows of one plane (grid z: the plane); each
// work-item owns one column of the tile (element lx: a warp's stores and
// local reads are consecutive) and RY consecutive rows of it.
//
//  1. The group stages the tile's XROWS = TILE_H + KY − 1 input rows with
//     their X halo, (KX − 1)·C elements, in local memory: every work-item
//     loads NLOAD values — all loads first, into registers, so that they
//     are in flight together — then stores them. Positions outside the
//     input follow the border rule (a tile wholly inside maps none).
//  2. The X pass: the XROWS × TX intermediate values, in pieces of RX
//     consecutive elements of a row spread over the work-items
//     (consecutive work-items on consecutive rows, which an odd row pitch
//     makes conflict-free), each piece streaming its RX + (KX − 1)·C staged
//     values into its RX sums, held in registers; after a barrier they are
//     stored over the staged rows (the intermediate aliases the stage,
//     halving the local memory).
//  3. The Y pass: each work-item streams its column's RY + KY − 1
//     intermediate values into its RY outputs and stores them.
//
// Order of operations (the CPU's separable method exactly, and so
// sepfused.cl's): the X pass sums its KX taps in order from zero with one
// fma each into an ACC_T value; the Y pass gives each output its taps
// jy = 0, 1, … in order, one fma each. With the constant border a row
// wholly outside the input along Y has the intermediate value CVAL2 (cval
// times the X factor's sum, rounded once), as the CPU's Y pass reads it;
// along X the X pass reads cval. Zero taps are left out (NONZERO).
//
// Arguments, taps and scalars are sepfused.cl's: the weights are the X
// factor's KX, then the Y factor's KY, then CVAL2.
//
// Defines: IN_T, OUT_T, ACC_T (ACC_DOUBLE), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, KX, KY, SHIFT_X, SHIFT_Y, C, TX, TY, RX (dividing TX), RY,
// STAGE_PITCH and INTER_PITCH (local row pitches, ≡ 1 mod 32, INTER_PITCH
// ≤ STAGE_PITCH), IDX32, TAPS_N, TAPS_IN_PARAMS, ALL_NONZERO or NZ0…NZ3.
// Every loop bound is a compile-time constant (PoCL 3.1 miscompiled
// barriers in loops bounded at run time).

#define NT (TX * TY)
#define TILE_H (TY * RY)
#define HALO_X ((KX - 1) * C)
#define STAGE_ELEMS (TX + HALO_X)
#define XROWS (TILE_H + KY - 1)
#define STAGED (XROWS * STAGE_ELEMS)
// The staged values each work-item loads, and its X-pass pieces.
#define NLOAD ((STAGED + NT - 1) / NT)
#define SPAN (RX + HALO_X)
#define TASKS (XROWS * (TX / RX))
#define NTASK ((TASKS + NT - 1) / NT)
#define TAP_Y (KX)


// staged_value is input element pe of row py of a plane, by the border
// rule (cval outside with the constant border).
INLINE ACC_T staged_value(__global const IN_T* restrict src, idx_t py, idx_t pe, idx_t ny, idx_t nx, idx_t in_row, ACC_T cval)
{
	const idx_t px = position_of(pe);
	const idx_t c = pe - px * C;
#if BORDER == BORDER_CONSTANT
	if (py >= 0 && py < ny && px >= 0 && px < nx) {
		return to_acc(src[py * in_row + px * C + c]);
	}
	return cval;
#else
	return to_acc(src[(idx_t)border_index(py, ny) * in_row + (idx_t)border_index(px, nx) * C + c]);
#endif
}

__kernel void correlate_septile(FUSED_PASS_PARAMS)
{
	const idx_t ny = (idx_t)ny_, nx = (idx_t)nx_, my = (idx_t)my_, mx = (idx_t)mx_;
	const idx_t stride = (idx_t)stride_, offset = (idx_t)offset_;
	const idx_t in_row = nx * C, out_row = mx * C;
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const int lid = ly * TX + lx;
	const idx_t plane = (idx_t)get_group_id(2);
	const idx_t e0 = (idx_t)get_group_id(0) * TX;
	const idx_t y0 = (idx_t)get_group_id(1) * TILE_H;
	// The first input row and element of the staged tile.
	const idx_t fy0 = y0 - SHIFT_Y, fe0 = e0 - SHIFT_X * C;
	const ACC_T cval2 = TAP(KX + KY);
	// The staged input rows, then (from step 2's second barrier) the
	// intermediate rows.
	__local ACC_T tile[XROWS * STAGE_PITCH];
	__global const IN_T* src = in + plane * ny * in_row;

	// 1. Stage the tile: value i is element i mod STAGE_ELEMS of row
	// i / STAGE_ELEMS.
	{
		ACC_T v[NLOAD];
		const int interior = fy0 >= 0 && fy0 + XROWS <= ny && fe0 >= 0 && fe0 + STAGE_ELEMS <= in_row;
		if (interior) {
			__global const IN_T* corner = src + fy0 * in_row + fe0;
#pragma unroll
			for (int m = 0; m < NLOAD; m++) {
				const int i = lid + m * NT;
				if (STAGED % NT == 0 || i < STAGED) {
					const int r = i / STAGE_ELEMS;
					v[m] = to_acc(corner[r * in_row + (i - r * STAGE_ELEMS)]);
				}
			}
		} else {
#pragma unroll
			for (int m = 0; m < NLOAD; m++) {
				const int i = lid + m * NT;
				if (STAGED % NT == 0 || i < STAGED) {
					const int r = i / STAGE_ELEMS;
					v[m] = staged_value(src, fy0 + r, fe0 + (i - r * STAGE_ELEMS), ny, nx, in_row, cval);
				}
			}
		}
#pragma unroll
		for (int m = 0; m < NLOAD; m++) {
			const int i = lid + m * NT;
			if (STAGED % NT == 0 || i < STAGED) {
				const int r = i / STAGE_ELEMS;
				tile[r * STAGE_PITCH + (i - r * STAGE_ELEMS)] = v[m];
			}
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);

	// 2. The X pass: piece p of row r is task r + p·XROWS.
	ACC_T sums[NTASK][RX];
#pragma unroll
	for (int n = 0; n < NTASK; n++) {
		const int t = lid + n * NT;
		if (TASKS % NT == 0 || t < TASKS) {
			const int r = t % XROWS, p = t / XROWS;
			if (has_value(fy0 + r, ny)) {
				LOCAL_PTR const ACC_T* row = tile + r * STAGE_PITCH + p * RX;
#pragma unroll
				for (int rx = 0; rx < RX; rx++) {
					sums[n][rx] = (ACC_T)0;
				}
				// Value q of the piece is tap (q − rx)/C of element rx; q
				// ascends, so each element's taps arrive in order.
#pragma unroll
				for (int q = 0; q < SPAN; q++) {
					const ACC_T v = row[q];
#pragma unroll
					for (int rx = 0; rx < RX; rx++) {
						const int d = q - rx;
						if (d >= 0 && d % C == 0 && d / C < KX) {
							const int jx = d / C;
							const ACC_T w = TAP(jx);
							if (NONZERO(jx, w)) {
								sums[n][rx] = fma_rn(w, v, sums[n][rx]);
							}
						}
					}
				}
			} else {
#pragma unroll
				for (int rx = 0; rx < RX; rx++) {
					sums[n][rx] = cval2;
				}
			}
		}
	}
	// Every piece has read its staged values: the intermediate may
	// overwrite them.
	barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
	for (int n = 0; n < NTASK; n++) {
		const int t = lid + n * NT;
		if (TASKS % NT == 0 || t < TASKS) {
			const int r = t % XROWS, p = t / XROWS;
			LOCAL_PTR ACC_T* to = tile + r * INTER_PITCH + p * RX;
#pragma unroll
			for (int rx = 0; rx < RX; rx++) {
				to[rx] = sums[n][rx];
			}
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);

	// 3. The Y pass down my column: intermediate row oy + q is tap q − r of
	// my row r, taps in order as q ascends.
	const idx_t e = e0 + lx;
	const int oy = ly * RY;
	ACC_T acc[RY];
#pragma unroll
	for (int r = 0; r < RY; r++) {
		acc[r] = (ACC_T)0;
	}
	Y_COLUMN(acc, tile + oy * INTER_PITCH + lx);
	if (e < out_row) {
		__global OUT_T* dst = out + plane * my * out_row * stride + offset;
#pragma unroll
		for (int r = 0; r < RY; r++) {
			const idx_t y = y0 + oy + r;
			if (y < my) {
				dst[(y * out_row + e) * stride] = to_output(acc[r]);
			}
		}
	}
}
