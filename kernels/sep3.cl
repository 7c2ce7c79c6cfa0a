// sep3.cl: the three passes of a 3-D separable correlation — along X (the
// last kernel axis, C interleaved samples after it), Y and Z (the two
// axes before it) — in one kernel, so that neither intermediate leaves
// the chip: the input is read about once and the output written once,
// where sepfused.cl's X and Y passes and a Z pass write and read a
// temporary as large as the output in between.
//
//   input [outer][NZ][NY][NX·C]  →  output [outer][MZ][MY][MX·C] (element i
//   stored at out[i·stride + offset], so a bank's kernels interleave)
//
// A work-group of TX × TY work-items owns an XY tile of TX output elements
// by TILE_H = TY·RY output rows and a segment of SEG output planes; each
// work-item owns one column of the tile (element lx: a warp's stores and
// local reads are consecutive) and RY consecutive rows of it. Step s of
// the segment brings input plane z0 − SHIFT_Z + s (by the border rule):
//
//  1. the group stages the tile's XROWS = TILE_H + KY − 1 input rows of the
//     plane with their X halo in local memory (read during the step before
//     into registers, so that the loads are in flight while it computes,
//     from offsets within a plane that each work-item maps by the border
//     rule once);
//  2. the X pass: the XROWS × TX intermediate values, in pieces of RX
//     consecutive elements of a row spread over the work-items
//     (consecutive work-items on consecutive rows, which an odd row pitch
//     makes conflict-free), each piece streaming its RX + (KX − 1)·C staged
//     values into its RX sums; into local memory;
//  3. the Y pass: each work-item streams its column's RY + KY − 1
//     intermediate values into its RY outputs' XY-filtered values;
//  4. the Z pass: output plane o = s − jz takes that value with tap jz. The
//     KZ planes in progress per output live in registers, a ring indexed
//     by compile-time constants (the step loop is unrolled KZ times, as in
//     sepfused.cl); output plane s − (KZ − 1) is complete, stored, and its
//     slot cleared.
//
// Order of operations (the CPU's separable method exactly): X, then Y,
// then Z, each value summing its pass's taps in order from zero with one
// fma each, in ACC_T. With the constant border the X pass reads cval
// outside along X, a row outside along Y has the intermediate value CVAL2
// (cval·sum(fx), rounded once) and a plane outside along Z the value CVAL3
// (cval·sum(fx)·sum(fy), rounded once), as the CPU's passes read them.
//
// Defines: IN_T, OUT_T, ACC_T (ACC_DOUBLE), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, KX, KY, KZ, SHIFT_X, SHIFT_Y, SHIFT_Z, C, TX, TY, RX (dividing
// TX), RY, SEG, STAGE_PITCH and INTER_PITCH (local row pitches, ≡ 1 mod
// 32), IDX32, TAPS_N, TAPS_IN_PARAMS, ALL_NONZERO or NZ0…NZ3. The weights
// are the X factor's KX, the Y factor's KY, the Z factor's KZ, then CVAL2
// and CVAL3.

#define NT (TX * TY)
#define TILE_H (TY * RY)
#define HALO_X ((KX - 1) * C)
#define STAGE_ELEMS (TX + HALO_X)
#define XROWS (TILE_H + KY - 1)
#define STAGED (XROWS * STAGE_ELEMS)
// The staged values each work-item loads per plane, and its X-pass pieces.
#define NLOAD ((STAGED + NT - 1) / NT)
#define SPAN (RX + HALO_X)
#define TASKS (XROWS * (TX / RX))
#define NTASK ((TASKS + NT - 1) / NT)
// Output plane o is complete at step o + KZ − 1: SEG + KZ − 1 steps, in
// whole rounds.
#define ROUNDS ((SEG + 2 * KZ - 2) / KZ)
#define TAP_Y (KX)
#define TAP_Z (KX + KY)


// mapped is position p of an axis of n by the border rule (p itself for
// the constant border, whose callers test has_value first).
INLINE idx_t mapped(idx_t p, idx_t n) {
#if BORDER == BORDER_CONSTANT
	return p;
#else
	return (idx_t)border_index(p, n);
#endif
}

// gather_offsets finds where this work-item's staged values lie in every
// input plane — row r of the tile is input row y0 − SHIFT_Y + r, element q
// of a row input element fe0 + q, each mapped by the border rule — once
// for all planes, so that a step's loads need no index arithmetic. −1
// marks a value outside the constant border (cval, or a row wholly
// outside, which the X pass does not read: its intermediate is CVAL2).
INLINE void gather_offsets(idx_t off[NLOAD], int lid, idx_t y0, idx_t fe0, idx_t ny, idx_t nx, idx_t in_row)
{
#pragma unroll
	for (int m = 0; m < NLOAD; m++) {
		const int i = lid + m * NT;
		off[m] = -1;
		if (STAGED % NT == 0 || i < STAGED) {
			const int r = i / STAGE_ELEMS, q = i - r * STAGE_ELEMS;
			const idx_t py = y0 - SHIFT_Y + r;
			const idx_t pe = fe0 + q;
			const idx_t px = position_of(pe);
			const idx_t c = pe - px * C;
#if BORDER == BORDER_CONSTANT
			if (py >= 0 && py < ny && px >= 0 && px < nx) {
				off[m] = py * in_row + px * C + c;
			}
#else
			off[m] = (idx_t)border_index(py, ny) * in_row + (idx_t)border_index(px, nx) * C + c;
#endif
		}
	}
}

// fetch_plane reads this work-item's staged values of input plane pz
// (nothing for a plane wholly outside: its XY value is CVAL3).
INLINE void fetch_plane(ACC_T v[NLOAD], __global const IN_T* restrict volume, idx_t pz, int lid,
	const idx_t off[NLOAD], idx_t nz, idx_t plane_elems, ACC_T cval)
{
	if (!has_value(pz, nz)) {
		return;
	}
	__global const IN_T* plane = volume + mapped(pz, nz) * plane_elems;
#pragma unroll
	for (int m = 0; m < NLOAD; m++) {
		if (STAGED % NT == 0 || lid + m * NT < STAGED) {
#if BORDER == BORDER_CONSTANT
			v[m] = off[m] >= 0 ? to_acc(plane[off[m]]) : cval;
#else
			v[m] = to_acc(plane[off[m]]);
#endif
		}
	}
}

__kernel void correlate_sep3(
	__global const IN_T* restrict in,
	__global OUT_T* restrict out,
	TAPS_PARAM,
	__constant int* restrict unused, // keeps the argument order of every family
	const long nz_, const long ny_, const long nx_,
	const long mz_, const long my_, const long mx_,
	const long outer_, const long stride_, const long offset_,
	const ACC_T cval)
{
	const idx_t nz = (idx_t)nz_, ny = (idx_t)ny_, nx = (idx_t)nx_;
	const idx_t mz = (idx_t)mz_, my = (idx_t)my_, mx = (idx_t)mx_;
	const idx_t outer = (idx_t)outer_, stride = (idx_t)stride_, offset = (idx_t)offset_;
	const idx_t in_row = nx * C, out_row = mx * C;
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const int lid = ly * TX + lx;
	const idx_t e0 = (idx_t)get_group_id(0) * TX;
	const idx_t y0 = (idx_t)get_group_id(1) * TILE_H;
	const idx_t fe0 = e0 - SHIFT_X * C; // first input element of the staged rows
	const ACC_T cval2 = TAP(KX + KY + KZ), cval3 = TAP(KX + KY + KZ + 1);
	__local ACC_T stage[XROWS * STAGE_PITCH];
	__local ACC_T inter[XROWS * INTER_PITCH];
	// My output column, and my first output row in the tile.
	const idx_t e = e0 + lx;
	const int oy = ly * RY;
	const idx_t segs = (mz + SEG - 1) / SEG;
	const idx_t plane_elems = ny * in_row;
	idx_t off[NLOAD];
	gather_offsets(off, lid, y0, fe0, ny, nx, in_row);

	for (idx_t job = (idx_t)get_group_id(2); job < outer * segs; job += (idx_t)get_num_groups(2)) {
		const idx_t vol = job / segs, z0 = (job - vol * segs) * SEG;
		__global const IN_T* volume = in + vol * nz * ny * in_row;
		__global OUT_T* dst = out + vol * mz * my * out_row * stride + offset;
		// Output plane o is complete at step o + KZ − 1: the segment's
		// last plane at step steps − 1 (the same for the whole group).
		const int steps = (int)min((idx_t)SEG, mz - z0) + KZ - 1;
		ACC_T acc[KZ][RY];
#pragma unroll
		for (int q = 0; q < KZ; q++) {
#pragma unroll
			for (int r = 0; r < RY; r++) {
				acc[q][r] = (ACC_T)0;
			}
		}
		ACC_T next[NLOAD];
		fetch_plane(next, volume, z0 - SHIFT_Z, lid, off, nz, plane_elems, cval);
		// Rounds of KZ steps (the ring's period), as many as a whole
		// segment needs: a loop whose trip count is known when the kernel
		// is compiled (PoCL miscompiled barriers in a loop bounded by
		// steps). Steps past the segment's last do no work, but every
		// work-item reaches every barrier.
		for (int base = 0; base < ROUNDS * KZ; base += KZ) {
#pragma unroll
			for (int u = 0; u < KZ; u++) {
				const int s = base + u;
				const int live = s < steps;
				const idx_t pz = z0 - SHIFT_Z + s;
				const int plane_in = has_value(pz, nz);
				// 1. Stage the plane fetched during the last step (the X
				// pass that read the stage last is behind the previous
				// step's second barrier), then fetch the next step's.
				if (live) {
#pragma unroll
					for (int m = 0; m < NLOAD; m++) {
						const int i = lid + m * NT;
						if (STAGED % NT == 0 || i < STAGED) {
							const int r = i / STAGE_ELEMS;
							stage[r * STAGE_PITCH + i - r * STAGE_ELEMS] = next[m];
						}
					}
				}
				barrier(CLK_LOCAL_MEM_FENCE);
				if (live) {
					if (s + 1 < steps) {
						fetch_plane(next, volume, pz + 1, lid, off, nz, plane_elems, cval);
					}

					// 2. The X pass: piece p of row r is task r + p·XROWS.
					if (plane_in) {
#pragma unroll
						for (int n = 0; n < NTASK; n++) {
							const int t = lid + n * NT;
							if (TASKS % NT == 0 || t < TASKS) {
								const int r = t % XROWS, p = t / XROWS;
								LOCAL_PTR const ACC_T* row = stage + r * STAGE_PITCH + p * RX;
								LOCAL_PTR ACC_T* to = inter + r * INTER_PITCH + p * RX;
								if (has_value(y0 - SHIFT_Y + r, ny)) {
									X_PIECE(row, to);
								} else {
#pragma unroll
									for (int rx = 0; rx < RX; rx++) {
										to[rx] = cval2;
									}
								}
							}
						}
					}
				}
				barrier(CLK_LOCAL_MEM_FENCE);

				if (live) {
					// 3. The Y pass down my column: intermediate row oy + q
					// is tap q − r of my row r, taps in order as q ascends.
					ACC_T xy[RY];
#pragma unroll
					for (int r = 0; r < RY; r++) {
						xy[r] = plane_in ? (ACC_T)0 : cval3;
					}
					if (plane_in) {
						Y_COLUMN(xy, inter + oy * INTER_PITCH + lx);
					}

					// 4. The Z pass: output plane o = s − jz takes tap jz in
					// slot (u − jz) mod KZ. Planes before the segment (o < 0)
					// gather values too, in slots that are never stored and
					// are cleared before their next use.
#pragma unroll
					for (int jz = 0; jz < KZ; jz++) {
						const int slot = (u - jz + KZ) % KZ;
						const ACC_T w = TAP(TAP_Z + jz);
						if (NONZERO(TAP_Z + jz, w)) {
#pragma unroll
							for (int r = 0; r < RY; r++) {
								acc[slot][r] = fma_rn(w, xy[r], acc[slot][r]);
							}
						}
					}
					// Output plane s − (KZ − 1) has all its taps: store it.
					{
						const int o = s - (KZ - 1);
						const int slot = (u + 1) % KZ;
						if (o >= 0 && e < out_row) {
							__global OUT_T* plane = dst + (z0 + o) * my * out_row * stride;
#pragma unroll
							for (int r = 0; r < RY; r++) {
								const idx_t y = y0 + oy + r;
								if (y < my) {
									plane[(y * out_row + e) * stride] = to_output(acc[slot][r]);
								}
							}
						}
#pragma unroll
						for (int r = 0; r < RY; r++) {
							acc[slot][r] = (ACC_T)0;
						}
					}
				}
			}
		}
	}
}
