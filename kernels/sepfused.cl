// sepfused.cl: the last two passes of a separable correlation — along X
// (the last kernel axis, C interleaved samples after it) and along Y (the
// axis before it) — fused into one kernel that walks down the rows (seeds
// 002 and 003: tiled passes, a rolling buffer), so the intermediate never
// leaves the chip and no row is filtered twice.
//
//   input [planes][NY][NX·C]  →  output [planes][MY][MX·C] (element i stored
//   at out[i·stride + offset], so a bank's last pass interleaves)
//
// A work-group owns a strip of TILE_X = TX·RX output elements of SEG output
// rows of one plane; each work-item owns RX consecutive elements. Step s
// brings intermediate row s of the strip (input row y0 − SHIFT_Y + s, by
// the border rule): the group stages that input row with its X halo in
// local memory, each work-item filters its RX elements along X (the X
// pass), then adds the results into the outputs that need them: output row
// o takes intermediate row s with Y tap jy = s − o. The KY outputs in
// progress per element live in registers, a ring indexed by compile-time
// constants (the step loop is unrolled KY times); an output is complete,
// stored and its slot cleared once its last tap is in.
//
// Order of operations (the CPU's separable method exactly): the X pass
// sums its taps in order from zero with one fma each into an ACC_T value;
// the Y pass gives each output its taps jy = 0, 1, … in order (steps
// arrive in order), one fma each. Outside the input along Y with the
// constant border the intermediate is CVAL2 (cval times the X factor's sum,
// rounded once), as the CPU's Y pass reads it; along X the X pass reads
// cval.
//
// Defines: IN_T, OUT_T, ACC_T (ACC_DOUBLE), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, KX, KY, SHIFT_X, SHIFT_Y, C, TX, RX, SEG, IDX32, TAPS_N,
// TAPS_IN_PARAMS, ALL_NONZERO or NZ0…NZ3. The weights are the X factor's
// KX, then the Y factor's KY, then CVAL2.


#define TILE_X (TX * RX)
#define HALO_X ((KX - 1) * C)
#define ROW_ELEMS (TILE_X + HALO_X)
#define SKEW(q) ((q) + (q) / RX) // see tiled.cl: conflict-free reads
#define ROW_PITCH (SKEW(ROW_ELEMS) + 1)
#define STEPS (SEG + KY - 1)
// Steps run in rounds of KY (the ring's period); the last round's extra
// steps read rows by the border rule like any other and store nothing, so
// every work-item reaches every barrier.
#define ROUNDS ((STEPS + KY - 1) / KY)


// Each work-item stages NLOAD values of a row: q = lx, lx + TX, …
#define NLOAD ((ROW_ELEMS + TX - 1) / TX)


// fetch_row reads this work-item's values of step s's input row, with its
// X halo by the border rule, into v (nothing for a row wholly outside:
// its intermediate is CVAL2).
INLINE void fetch_row(ACC_T* v, __global const IN_T* restrict src, idx_t y0, int s, int lx,
	idx_t fe0, int inside_x, idx_t ny, idx_t nx, idx_t in_row, ACC_T cval)
{
	if (!has_value(y0 - SHIFT_Y + s, ny)) {
		return;
	}
	const idx_t py = y0 - SHIFT_Y + s;
#if BORDER == BORDER_CONSTANT
	__global const IN_T* line = src + py * in_row;
#else
	__global const IN_T* line = src + (idx_t)border_index(py, ny) * in_row;
#endif
#pragma unroll
	for (int m = 0; m < NLOAD; m++) {
		const int q = lx + m * TX;
		if (q < ROW_ELEMS) {
			if (inside_x) {
				v[m] = to_acc(line[fe0 + q]);
			} else {
				const idx_t pe = fe0 + q;
				const idx_t px = position_of(pe);
				const idx_t c = pe - px * C;
#if BORDER == BORDER_CONSTANT
				v[m] = (px >= 0 && px < nx) ? to_acc(line[px * C + c]) : cval;
#else
				v[m] = to_acc(line[(idx_t)border_index(px, nx) * C + c]);
#endif
			}
		}
	}
}

__kernel void correlate_sepfused(FUSED_PASS_PARAMS)
{
	const idx_t ny = (idx_t)ny_, nx = (idx_t)nx_, my = (idx_t)my_, mx = (idx_t)mx_;
	const idx_t planes = (idx_t)planes_, stride = (idx_t)stride_, offset = (idx_t)offset_;
	const idx_t in_row = nx * C, out_row = mx * C;
	const int lx = (int)get_local_id(0);
	const idx_t e0 = (idx_t)get_group_id(0) * TILE_X;
	const idx_t y0 = (idx_t)get_group_id(1) * SEG;
	const idx_t fe0 = e0 - SHIFT_X * C; // first input element of the staged rows
	const int inside_x = fe0 >= 0 && fe0 + ROW_ELEMS <= in_row;
	const ACC_T cval2 = TAP(KX + KY);
	__local ACC_T rows[2 * ROW_PITCH];
	// This work-item's values start here in a staged row.
	const int mine = lx * (RX + 1);

	for (idx_t plane = (idx_t)get_group_id(2); plane < planes; plane += (idx_t)get_num_groups(2)) {
		__global const IN_T* src = in + plane * ny * in_row;
		ACC_T next[NLOAD];
		fetch_row(next, src, y0, 0, lx, fe0, inside_x, ny, nx, in_row, cval);
		ACC_T acc[KY][RX];
#pragma unroll
		for (int q = 0; q < KY; q++) {
#pragma unroll
			for (int rx = 0; rx < RX; rx++) {
				acc[q][rx] = (ACC_T)0;
			}
		}
		for (int base = 0; base < ROUNDS * KY; base += KY) {
#pragma unroll
			for (int u = 0; u < KY; u++) {
				const int s = base + u;
				{
					LOCAL_PTR ACC_T* row = rows + (s & 1) * ROW_PITCH;
					const int row_inside = has_value(y0 - SHIFT_Y + s, ny);
					// Stage the row fetched during the last step, then
					// fetch the next step's, so that its loads are in
					// flight while this step computes.
#pragma unroll
					for (int m = 0; m < NLOAD; m++) {
						const int q = lx + m * TX;
						if (q < ROW_ELEMS) {
							row[SKEW(q)] = next[m];
						}
					}
					barrier(CLK_LOCAL_MEM_FENCE);
					fetch_row(next, src, y0, s + 1, lx, fe0, inside_x, ny, nx, in_row, cval);

					// The X pass: this step's intermediate for my elements.
					ACC_T inter[RX];
#pragma unroll
					for (int rx = 0; rx < RX; rx++) {
						inter[rx] = row_inside ? (ACC_T)0 : cval2;
					}
					if (row_inside) {
#pragma unroll
						for (int jx = 0; jx < KX; jx++) {
							const ACC_T w = TAP(jx);
							if (NONZERO(jx, w)) {
#pragma unroll
								for (int rx = 0; rx < RX; rx++) {
									inter[rx] = fma_rn(w, row[mine + SKEW(rx + jx * C)], inter[rx]);
								}
							}
						}
					}

					// The Y pass: output o = s − jy takes tap jy. Outputs
					// before the strip (o < 0) or after it (o ≥ SEG) gather
					// values too, in slots that are never stored and are
					// cleared before their next use, so no test is needed.
#pragma unroll
					for (int jy = 0; jy < KY; jy++) {
						const int slot = (u - jy + KY) % KY;
						const ACC_T w = TAP(KX + jy);
						if (NONZERO(KX + jy, w)) {
#pragma unroll
							for (int rx = 0; rx < RX; rx++) {
								acc[slot][rx] = fma_rn(w, inter[rx], acc[slot][rx]);
							}
						}
					}

					// Output s − (KY − 1) has all its taps: store it.
					{
						const int o = s - (KY - 1);
						const int slot = (u + 1) % KY;
						const idx_t y = y0 + o;
						if (o >= 0 && o < SEG && y < my) {
							const idx_t e = e0 + lx * RX;
							__global OUT_T* dst = out + (plane * my + y) * out_row * stride + offset;
#pragma unroll
							for (int rx = 0; rx < RX; rx++) {
								if (e + rx < out_row) {
									dst[(e + rx) * stride] = to_output(acc[slot][rx]);
								}
							}
						}
#pragma unroll
						for (int rx = 0; rx < RX; rx++) {
							acc[slot][rx] = (ACC_T)0;
						}
					}
				}
			}
		}
		// The next plane's first rows go where this plane's last were read.
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}
