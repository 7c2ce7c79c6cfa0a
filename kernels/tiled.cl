// tiled.cl: direct correlation, register-blocked (seed 000) over a tile
// staged in local memory with its halo (seed 004's input tiling): the fast
// implementation of the direct method. Same canonical form, arguments and
// results as direct.cl (which remains the fallback for tiles that do not fit
// local memory):
//
//   input  [outer planes…][Y][X·C]   output [outer…][Y'][X'·C][BANK]
//
// A work-group of TX × TY work-items computes a tile of TILE_Y = TY·RY rows
// by TILE_X = TX·RX elements of one outer plane, for every kernel of the
// bank. Each work-item owns RY × RX neighbouring outputs (RX consecutive
// elements of RY consecutive rows) and all BANK kernels' accumulators for
// them. For each outer tap the group stages the input tile and its halo in
// local memory, converted to ACC_T once (uint8 widened once); interior tiles
// read it with no border mapping, only edge tiles map positions. Then each
// work-item walks the RY + KY − 1 input rows its outputs read: every input
// value it loads into registers is multiplied into every accumulator that
// needs it (all taps of that row, all RX outputs, all RY rows, all BANK
// kernels).
//
// Order of operations: output (ry, rx) receives input row i from kernel row
// jy = i − ry, so walking i upwards gives it its kernel rows in order, and
// within a row its taps jx in order; outer taps come in order around that.
// Each tap is one fma_rn into the output's accumulator: the row-major order
// and rounding of every other engine, hence the same bits.
//
// Defines: those of direct.cl (IN_T, OUT_T, ACC_T, OUT_INTEGER, OUT_MIN,
// OUT_MAX, BORDER, BANK, KY, KX, SHIFT_Y, SHIFT_X, C, NOUTER, OUTER_TAPS)
// and TX, TY (work-items), RX, RY (outputs per work-item), IDX32 (1 when
// every index fits an int), UNROLL_ROWS (unroll the walk over input rows,
// for kernels small enough), UNROLL_OUTER (unroll the outer taps too, so
// that every weight's index is a constant), ALL_NONZERO or NZ0…NZ3 (which weights are
// nonzero, see NONZERO), VECTOR_STORES and OUT_T4 (4-wide stores),
// VECTOR_LOADS and IN_T4 (4-wide staging), TAPS_N
// (number of weights) and, on CUDA, TAPS_IN_PARAMS (1: the weights arrive
// by value among the kernel's parameters, in the constant bank, so each fma
// takes its weight straight from there).
//
// Bank groups (correlate_tiled only): with OUT_BANK > BANK, the bank of
// OUT_BANK kernels is split into BANK_GROUPS = OUT_BANK / BANK groups of
// BANK, each work-group computing one group's kernels (its grid's Z walks
// groups × planes, group-major — plane-major with LOCAL_WEIGHTS, below;
// with one group, the planes alone, so that weight indices stay constants)
// and writing them at their place in the interleaved output; the weights come group by group (group g's taps,
// each tap's BANK weights). A large bank's accumulators then fit registers
// (S000's 32 kernels held 4 × 32 in 167 registers). Each output's sum is
// unchanged: the same taps in the same order.
//
// Weights in local memory (correlate_tiled only, LOCAL_WEIGHTS, float
// accumulators, BANK a multiple of 4): the work-group stages its bank
// (group)'s weights in local memory once, and each work-item reads the BANK
// weights of a tap as 4-vectors, every read one broadcast, before the
// tap's fma. Read by a run-time index from the weights' buffer (the outer
// taps are a loop, and a group is a run-time value), each weight took one
// load for its RX · RY fma (S000's bank groups on CUDA: 413 loads per
// 1,568 fma); here one load serves 4 · RX · RY.


#ifndef OUT_BANK
#define OUT_BANK BANK
#endif
#define BANK_GROUPS (OUT_BANK / BANK)

#define TILE_X (TX * RX)
#define TILE_Y (TY * RY)
#define HALO_X ((KX - 1) * C)
#define ROW_ELEMS (TILE_X + HALO_X)
// Local rows are skewed: element q sits at q + q/RX, one spare slot after
// every RX values. A work-item's values then start RX + 1 slots after its
// neighbour's (an odd stride), so the 32 work-items of a warp reading their
// k-th value hit 32 different banks.
#define SKEW(q) ((q) + (q) / RX)
#define ROW_PITCH (SKEW(ROW_ELEMS) + 1)
#define TILE_ROWS (TILE_Y + KY - 1)
#define IN_ROWS (RY + KY - 1)

#if LOCAL_WEIGHTS
// One group's weights: every tap's BANK weights, tap-major, as 4-vectors.
#define GROUP_TAPS (OUTER_TAPS * KY * KX * BANK)
// WEIGHT(wi, k): kernel k's weight of the current tap (index wi of the
// launch's taps), from the registers tap_weights filled.
#define WEIGHT(wi, k) (wv[k])

// tap_weights reads tap `tap`'s BANK weights of the staged group into wv.
INLINE void tap_weights(ACC_T wv[BANK], LOCAL_PTR const float4* lw, int tap)
{
#pragma unroll
	for (int k = 0; k < BANK; k += 4) {
		const float4 w4 = lw[(tap * BANK + k) / 4];
		wv[k] = w4.x;
		wv[k + 1] = w4.y;
		wv[k + 2] = w4.z;
		wv[k + 3] = w4.w;
	}
}
#else
#define WEIGHT(wi, k) TAP(wi)
#endif


// Staging by 4-vectors (VECTOR_LOADS, where the host found input rows
// 4-aligned; LOAD4_IN in common.cl): a row's run starts LEAD elements
// before the tile's first input element, at a 4-aligned address, and is
// read in NCHUNK vectors.
#if VECTOR_LOADS
#define LEAD ((4 - (SHIFT_X * C) % 4) % 4)
#define NCHUNK ((LEAD + ROW_ELEMS + 3) / 4)
#endif

// A work-item's walk reads RX + (KX − 1)·C values of each input row it
// visits. Where the walk is unrolled, they are put in registers
// first, each read from local memory once for all RY output rows, all
// taps and all bank kernels; otherwise (large kernels, whose rows would
// hold too many registers) a window of RX values slides along the row
// (WINDOW_X, where C ≤ RX), else ROW_VALUE reads local memory at each use.
// Each output still receives its taps in order: rows in order, and within
// a row jx in order (the window changes which loop is outermost, not the
// order any accumulator sees).

#if UNROLL_ROWS
#define ROW_VALUE(row, q) (row_values[q])
#else
#define ROW_VALUE(row, q) ((row)[SKEW(q)])
#endif

#if WINDOW_X
// window_start reads a row's values 0 … RX − 2 into the window; then
// window_advance, before tap jx, the ones tap jx adds (up to jx·C + RX − 1),
// so that WINDOW_VALUE(rx, jx), value rx + jx·C, is in its slot.
INLINE void window_start(ACC_T win[RX], LOCAL_PTR const ACC_T* row)
{
#pragma unroll
	for (int q = 0; q < RX - 1; q++) {
		win[q % RX] = row[SKEW(q)];
	}
}

INLINE void window_advance(ACC_T win[RX], LOCAL_PTR const ACC_T* row, int jx)
{
#pragma unroll
	for (int q = jx == 0 ? RX - 1 : (jx - 1) * C + RX; q < jx * C + RX; q++) {
		win[q % RX] = row[SKEW(q)];
	}
}

#define WINDOW_VALUE(rx, jx) (win[((rx) + (jx) * C) % RX])
#endif

#if VECTOR_LOADS
// put4 stores chunk j of tile row r (4 input values read from LEAD
// elements before the row's first, at an aligned address) into the tile,
// converted once; values outside the row's ROW_ELEMS are dropped.
INLINE void put4(LOCAL_PTR ACC_T* restrict tile, int r, int j, IN_T4 v)
{
	LOCAL_PTR ACC_T* t = tile + r * ROW_PITCH;
	const int q = 4 * j - LEAD;
	if (q >= 0) {
		t[SKEW(q)] = to_acc(v.x);
	}
	if (q + 1 >= 0 && q + 1 < ROW_ELEMS) {
		t[SKEW(q + 1)] = to_acc(v.y);
	}
	if (q + 2 >= 0 && q + 2 < ROW_ELEMS) {
		t[SKEW(q + 2)] = to_acc(v.z);
	}
	if (q + 3 < ROW_ELEMS) {
		t[SKEW(q + 3)] = to_acc(v.w);
	}
}

#if TILES_INSIDE
// put4_from is put4 for a chunk read from lead elements before the row's
// first, lead known at run time (up to LEAD + 3; stage_lead): each value
// kept where 0 ≤ q < ROW_ELEMS, tested by one unsigned comparison, its
// slot by an unsigned division (a shift). Launches with TILES_INSIDE
// stage by it; the others keep put4: the same forms there made four 2-D
// rows (same mode, so not staged by this) 8–10% slower on the H100
// (bench/results/2026-11-28-h100-s37, call 1).
INLINE void put4_from(LOCAL_PTR ACC_T* restrict tile, int r, int j, int lead, IN_T4 v)
{
	LOCAL_PTR ACC_T* t = tile + r * ROW_PITCH;
	const uint q = (uint)(4 * j - lead);
#define PUT_AT(n, x) \
	if (q + n < (uint)ROW_ELEMS) { \
		t[q + n + (q + n) / RX] = to_acc(x); \
	}
	PUT_AT(0, v.x)
	PUT_AT(1, v.y)
	PUT_AT(2, v.z)
	PUT_AT(3, v.w)
#undef PUT_AT
}
#endif

// stage_lead is how many elements before a tile's footprint (from element
// fe0 of its rows) its rows are read from, at a 4-aligned address: LEAD,
// or with TILES_INSIDE up to 3 more, since a last tile moved back may start
// anywhere (S000: 250 outputs a row, the second tile of 128 starts at 122).
INLINE int stage_lead(idx_t fe0)
{
#if TILES_INSIDE
	return LEAD + (int)((fe0 - LEAD) & 3);
#else
	return LEAD;
#endif
}

// STAGE_CHUNKS: the 4-vectors a row's staging walks; chunks past what a
// row needs at its lead (4·j − lead ≥ ROW_ELEMS) are skipped, not read.
#if TILES_INSIDE
#define STAGE_CHUNKS ((LEAD + 3 + ROW_ELEMS + 3) / 4)
#else
#define STAGE_CHUNKS NCHUNK
#endif

// vector_staging reports whether a tile whose footprint starts at element
// fe0 of its rows (and lies inside the plane: inside_yx) is read by
// aligned 4-vectors from lead elements before it.
INLINE int vector_staging(int inside_yx, idx_t fe0, int lead, idx_t in_row)
{
	return inside_yx && fe0 - lead >= 0 && fe0 - lead + 4 * ((lead + ROW_ELEMS + 3) / 4) <= in_row;
}
#endif

// stage_tile stages input plane src's tile of this work-group — TILE_ROWS
// rows from fy0, ROW_ELEMS elements from fe0, each converted to ACC_T once
// — into tile's skewed rows. inside_yx: the footprint lies wholly inside
// the plane (no border mapping needed).
INLINE void stage_tile(LOCAL_PTR ACC_T* restrict tile, __global const IN_T* restrict in, idx_t src,
	idx_t fy0, idx_t fe0, int inside_yx, idx_t in_y, idx_t in_x, int lid, ACC_T cval)
{
	const idx_t in_row = in_x * C;
#if VECTOR_LOADS
	const int lead = stage_lead(fe0);
	if (src >= 0 && vector_staging(inside_yx, fe0, lead, in_row)) {
		__global const IN_T* base = in + (src * in_y + fy0) * in_row + fe0 - lead;
		for (int i = lid; i < TILE_ROWS * STAGE_CHUNKS; i += TX * TY) {
			const int r = i / STAGE_CHUNKS, j = i - r * STAGE_CHUNKS;
#if TILES_INSIDE
			if (4 * j - lead >= ROW_ELEMS) {
				continue;
			}
			put4_from(tile, r, j, lead, LOAD4_IN(base + (idx_t)r * in_row + 4 * j));
#else
			put4(tile, r, j, LOAD4_IN(base + (idx_t)r * in_row + 4 * j));
#endif
		}
	} else
#endif
	if (inside_yx && src >= 0) {
		__global const IN_T* base = in + (src * in_y + fy0) * in_row + fe0;
		for (int i = lid; i < TILE_ROWS * ROW_ELEMS; i += TX * TY) {
			const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
			tile[r * ROW_PITCH + SKEW(q)] = to_acc(base[(idx_t)r * in_row + q]);
		}
	} else {
#if BORDER != BORDER_CONSTANT && C == 1
		// The part inside the plane plainly, the frame by the border rule
		// (common.cl). Interleaved channels keep the per-element mapping:
		// with stage_edge 4096² RGBA 5×5 under mirror lost 8% (0.248 →
		// 0.268 ms), while 512³ 3³ under reflect gained 7% and S000's bank
		// of 8 19% (bench/results/2026-11-27-h100-s35, call 11).
		stage_edge(tile, ROW_PITCH, RX, TILE_ROWS, ROW_ELEMS, TX * TY, in, src, fy0, fe0, in_y, in_x, lid, cval);
#else
		for (int i = lid; i < TILE_ROWS * ROW_ELEMS; i += TX * TY) {
			const int r = i / ROW_ELEMS, q = i - r * ROW_ELEMS;
			const idx_t pe = fe0 + q;
			const idx_t px = position_of(pe);
			tile[r * ROW_PITCH + SKEW(q)] = load_sample(in, src, fy0 + r, px, pe - px * C, in_y, in_x, cval);
		}
#endif
	}
}

// store_block writes one work-item's outputs of output plane `plane`: its
// RY rows, from row y, of RX outputs from element e, each BANK kernels'
// values from kernel k0 of the interleaved OUT_BANK (contiguous RX·BANK
// values where the bank is whole).
// full_tile: the work-group's whole tile lies inside the output.
INLINE void store_block(__global OUT_T* restrict out, ACC_T acc[RY][RX][BANK], idx_t plane, idx_t y, idx_t e, int k0,
	idx_t out_y, idx_t out_row, int full_tile)
{
#pragma unroll
	for (int ry = 0; ry < RY; ry++, y++) {
		__global OUT_T* o = out + ((plane * out_y + y) * out_row + e) * OUT_BANK + k0;
#if VECTOR_STORES
		if (full_tile) {
#if BANK_GROUPS == 1
#pragma unroll
			for (int q = 0; q < RX * BANK; q += 4) {
				OUT_T4 v;
				v.x = to_output(acc[ry][q / BANK][q % BANK]);
				v.y = to_output(acc[ry][(q + 1) / BANK][(q + 1) % BANK]);
				v.z = to_output(acc[ry][(q + 2) / BANK][(q + 2) % BANK]);
				v.w = to_output(acc[ry][(q + 3) / BANK][(q + 3) % BANK]);
				STORE4(o + q, v);
			}
#else
			// A group's BANK values of each output (BANK a multiple of 4).
#pragma unroll
			for (int rx = 0; rx < RX; rx++) {
#pragma unroll
				for (int k = 0; k < BANK; k += 4) {
					OUT_T4 v;
					v.x = to_output(acc[ry][rx][k]);
					v.y = to_output(acc[ry][rx][k + 1]);
					v.z = to_output(acc[ry][rx][k + 2]);
					v.w = to_output(acc[ry][rx][k + 3]);
					STORE4(o + rx * OUT_BANK + k, v);
				}
			}
#endif
			continue;
		}
#endif
#pragma unroll
		for (int rx = 0; rx < RX; rx++) {
			if (full_tile || (y < out_y && e + rx < out_row)) {
#pragma unroll
				for (int k = 0; k < BANK; k++) {
					o[rx * OUT_BANK + k] = to_output(acc[ry][rx][k]);
				}
			}
		}
	}
}

// GROUP_BOUNDS: with MIN_GROUPS, CUDA keeps a work-item's registers few
// enough for that many work-groups per multiprocessor.
#if defined(__CUDACC__) && MIN_GROUPS > 0
#define GROUP_BOUNDS __launch_bounds__(TX * TY, MIN_GROUPS)
#else
#define GROUP_BOUNDS
#endif

__kernel void GROUP_BOUNDS correlate_tiled(DIRECT_PARAMS)
{
	DIRECT_SIZES;
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const int lid = ly * TX + lx;
#if TILES_INSIDE
	// No output reads outside the input (valid problems) and the output
	// spans a tile each way: the last tile of a row or column of tiles is
	// moved back to end where the output does, so that every footprint
	// lies inside the input and is staged without the border rule. Where
	// it overlaps its neighbour both compute the same outputs, bit for
	// bit. (S000: 250 outputs a row take two tiles of 128, and half the
	// tiles staged every element by the border rule, 106 instructions per
	// 4 elements; moved inside, its banks ran 5–13% faster.)
	const idx_t e0 = min((idx_t)get_group_id(0) * TILE_X, out_row - TILE_X);
	const idx_t y0 = min((idx_t)get_group_id(1) * TILE_Y, out_y - TILE_Y);
#else
	const idx_t e0 = (idx_t)get_group_id(0) * TILE_X; // first output element of the tile
	const idx_t y0 = (idx_t)get_group_id(1) * TILE_Y;
#endif
	// The tile's input footprint, and whether it lies wholly inside the
	// input (then no position needs the border rule).
	const idx_t fy0 = y0 - SHIFT_Y, fe0 = e0 - SHIFT_X * C;
	const int inside_yx = fy0 >= 0 && fy0 + TILE_ROWS <= in_y && fe0 >= 0 && fe0 + ROW_ELEMS <= in_row;
	const int full_tile = y0 + TILE_Y <= out_y && e0 + TILE_X <= out_row;
	__local ACC_T tile[TILE_ROWS * ROW_PITCH];
#if LOCAL_WEIGHTS
	__local float4 lw[GROUP_TAPS / 4];
	int staged_group = -1;
#endif

	for (idx_t zg = (idx_t)get_group_id(2); zg < planes * BANK_GROUPS; zg += (idx_t)get_num_groups(2)) {
#if BANK_GROUPS == 1 || LOCAL_WEIGHTS
		// Plane-major. With one group (every kernel that is not a split
		// bank) the divisor is a constant, so plane is zg and group 0 at
		// compile time, and every weight index below (wbase + …) is a
		// constant: the weights come from the constant bank by uniform
		// loads and NONZERO folds. Walking group-major there too made group
		// a run-time value (zg / planes) and the weights indexed at run
		// time (S001 w21: 469 LDC and 144 registers against 92 and 128).
		// H100, A/B interleaved: RGBA 5×5 0.312 → 0.233 ms, S001 w21 0.193
		// → 0.103 (bench/results/2026-11-26-h100-ab). With LOCAL_WEIGHTS
		// each work-group stages its own group's weights, so the groups of
		// a tile can run together, writing each output line whole while it
		// is in L2 (group-major, each line was written in BANK_GROUPS parts
		// far apart in time).
		const idx_t plane = zg / BANK_GROUPS;
		const int group = (int)(zg % BANK_GROUPS);
#else
		// Group-major: the work-groups resident together share one
		// group's weights (S000's 32 kernels: 5.5 KB of 44 in the constant
		// cache, not all of them at once) and read the input from L2.
		const idx_t plane = zg % planes;
		const int group = (int)(zg / planes);
#endif
#if LOCAL_WEIGHTS
		if (group != staged_group) {
			// Every read of the previous group's weights ended at the
			// barrier closing its last outer tap; the barrier after the
			// first tile below makes these visible.
			LOCAL_PTR float* lws = (LOCAL_PTR float*)lw;
			for (int i = lid; i < GROUP_TAPS; i += TX * TY) {
				lws[i] = TAP(group * GROUP_TAPS + i);
			}
			staged_group = group;
		}
#endif
		ACC_T acc[RY][RX][BANK];
#pragma unroll
		for (int ry = 0; ry < RY; ry++) {
#pragma unroll
			for (int rx = 0; rx < RX; rx++) {
#pragma unroll
				for (int k = 0; k < BANK; k++) {
					acc[ry][rx][k] = (ACC_T)0;
				}
			}
		}
#if UNROLL_OUTER
#pragma unroll
#endif
		for (int t = 0; t < OUTER_TAPS; t++) {
			const idx_t src = (idx_t)outer_plane(outer, plane, t);
			stage_tile(tile, in, src, fy0, fe0, inside_yx, in_y, in_x, lid, cval);
			barrier(CLK_LOCAL_MEM_FENCE);

			const int wbase = (group * OUTER_TAPS + t) * KY * KX * BANK;
			// This work-item's input values start here in each row.
			LOCAL_PTR const ACC_T* mine = tile + ly * RY * ROW_PITCH + lx * (RX + 1);
#if UNROLL_ROWS
#pragma unroll
#else
#pragma unroll 1
#endif
			for (int i = 0; i < IN_ROWS; i++) {
				LOCAL_PTR const ACC_T* row = mine + i * ROW_PITCH;
#if UNROLL_ROWS && !WINDOW_X
				ACC_T row_values[RX + (KX - 1) * C];
#pragma unroll
				for (int q = 0; q < RX + (KX - 1) * C; q++) {
					row_values[q] = row[SKEW(q)];
				}
#endif
#if WINDOW_X
				// Tap jx reads the row's values jx·C … jx·C + RX − 1: a
				// window of RX registers (a ring: value q in slot q % RX)
				// that each tap moves C values on, each value read from
				// local memory once.
				ACC_T win[RX];
				window_start(win, row);
#pragma unroll
				for (int jx = 0; jx < KX; jx++) {
					window_advance(win, row, jx);
#pragma unroll
					for (int ry = 0; ry < RY; ry++) {
						const int jy = i - ry; // the kernel row input row i is for output row ry
						if (jy >= 0 && jy < KY) {
#if LOCAL_WEIGHTS
							ACC_T wv[BANK];
							tap_weights(wv, lw, (t * KY + jy) * KX + jx);
#endif
#pragma unroll
							for (int k = 0; k < BANK; k++) {
								const int wi = wbase + (jy * KX + jx) * BANK + k;
								const ACC_T w = WEIGHT(wi, k);
								if (NONZERO(wi, w)) {
#pragma unroll
									for (int rx = 0; rx < RX; rx++) {
										acc[ry][rx][k] = fma_rn(w, WINDOW_VALUE(rx, jx), acc[ry][rx][k]);
									}
								}
							}
						}
					}
				}
#else
#pragma unroll
				for (int ry = 0; ry < RY; ry++) {
					const int jy = i - ry; // the kernel row input row i is for output row ry
					if (jy >= 0 && jy < KY) {
#pragma unroll
						for (int jx = 0; jx < KX; jx++) {
#if LOCAL_WEIGHTS
							ACC_T wv[BANK];
							tap_weights(wv, lw, (t * KY + jy) * KX + jx);
#endif
#pragma unroll
							for (int k = 0; k < BANK; k++) {
								const int wi = wbase + (jy * KX + jx) * BANK + k;
								const ACC_T w = WEIGHT(wi, k);
								if (NONZERO(wi, w)) {
#pragma unroll
									for (int rx = 0; rx < RX; rx++) {
										acc[ry][rx][k] = fma_rn(w, ROW_VALUE(row, rx + jx * C), acc[ry][rx][k]);
									}
								}
							}
						}
					}
				}
#endif
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}

		store_block(out, acc, plane, y0 + ly * RY, e0 + lx * RX, group * BANK, out_y, out_row, full_tile);
	}
}

#if ROLL_Z
#if VECTOR_LOADS
// The 4-vectors each work-item reads of a tile, and their reading into
// registers: correlate_rolling reads the next plane's tile while it
// computes on the current one, and stores it into local memory after
// (put_fetched), so the loads' latency hides behind the fma.
#define FETCH_N ((TILE_ROWS * NCHUNK + TX * TY - 1) / (TX * TY))

INLINE void fetch_tile(IN_T4 pf[FETCH_N], __global const IN_T* restrict in, idx_t src, idx_t fy0, idx_t fe0,
	idx_t in_y, idx_t in_row, int lid)
{
	__global const IN_T* base = in + (src * in_y + fy0) * in_row + fe0 - LEAD;
#pragma unroll
	for (int f = 0; f < FETCH_N; f++) {
		const int i = lid + f * TX * TY;
		if (i < TILE_ROWS * NCHUNK) {
			const int r = i / NCHUNK, j = i - r * NCHUNK;
			pf[f] = LOAD4_IN(base + (idx_t)r * in_row + 4 * j);
		}
	}
}

INLINE void put_fetched(LOCAL_PTR ACC_T* restrict tile, IN_T4 pf[FETCH_N], int lid)
{
#pragma unroll
	for (int f = 0; f < FETCH_N; f++) {
		const int i = lid + f * TX * TY;
		if (i < TILE_ROWS * NCHUNK) {
			const int r = i / NCHUNK, j = i - r * NCHUNK;
			put4(tile, r, j, pf[f]);
		}
	}
}
#endif

// roll_source is the input plane that virtual plane v (output plane v − t
// for outer tap t) reads: v − shift mapped by the border rule, or −1 for a
// plane wholly outside (constant border).
INLINE idx_t roll_source(idx_t v, idx_t z_shift, idx_t z_in)
{
	const idx_t p = v - z_shift;
#if BORDER == BORDER_CONSTANT
	return inside(p, z_in) ? p : -1;
#else
	return (idx_t)border_index(p, z_in);
#endif
}

// correlate_rolling is correlate_tiled for problems with one outer axis
// (volumes: Z, Y, X·C) whose kernel spans it (KZ > 1): instead of staging
// every input plane once per outer tap, a work-group walks down a chunk of
// output planes and stages each input plane once, adding it into
// the KZ output planes that read it (seed 003's rolling buffer, held in
// registers). Slot j of the accumulators holds output plane v − (KZ−1) + j
// while input plane v is added, which takes outer tap KZ − 1 − j from it;
// after plane v, slot 0 is complete, is stored, and the slots shift down.
// Each output still receives its outer taps in order, and within each its
// rows and taps in order: the same bits as correlate_tiled. The first KZ−1
// planes of a chunk also feed outputs before the chunk, which are dropped
// (a few wasted fma rather than a branch in the inner loop).
//
// outer holds the Z axis: input length, output length, KZ, shift, and then
// the chunk length (a run-time value, so chunkings share one program).
__kernel void GROUP_BOUNDS correlate_rolling(DIRECT_PARAMS)
{
	DIRECT_SIZES; // planes unused: the chunks walk Z
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const int lid = ly * TX + lx;
	const idx_t e0 = (idx_t)get_group_id(0) * TILE_X;
	const idx_t y0 = (idx_t)get_group_id(1) * TILE_Y;
	const idx_t fy0 = y0 - SHIFT_Y, fe0 = e0 - SHIFT_X * C;
	const int inside_yx = fy0 >= 0 && fy0 + TILE_ROWS <= in_y && fe0 >= 0 && fe0 + ROW_ELEMS <= in_row;
	const int full_tile = y0 + TILE_Y <= out_y && e0 + TILE_X <= out_row;
	const idx_t z_in = outer[0], z_out = outer[1], z_shift = outer[3], z_chunk = outer[4];
	const idx_t zo0 = (idx_t)get_group_id(2) * z_chunk;
	const idx_t zo1 = min(zo0 + z_chunk, z_out);
	__local ACC_T tile[TILE_ROWS * ROW_PITCH];
	LOCAL_PTR const ACC_T* mine = tile + ly * RY * ROW_PITCH + lx * (RX + 1);

	ACC_T acc[KZ][RY][RX][BANK];
#pragma unroll
	for (int j = 0; j < KZ; j++) {
#pragma unroll
		for (int ry = 0; ry < RY; ry++) {
#pragma unroll
			for (int rx = 0; rx < RX; rx++) {
#pragma unroll
				for (int k = 0; k < BANK; k++) {
					acc[j][ry][rx][k] = (ACC_T)0;
				}
			}
		}
	}
	const idx_t v_end = zo1 + KZ - 1;
#if VECTOR_LOADS
	// Interior tiles read each plane by 4-vectors into registers one plane
	// ahead; others (and planes wholly outside) stage as correlate_tiled.
	const int fetch = vector_staging(inside_yx, fe0, LEAD, in_row);
	IN_T4 pf[FETCH_N];
	idx_t next = roll_source(zo0, z_shift, z_in);
	if (fetch && next >= 0) {
		fetch_tile(pf, in, next, fy0, fe0, in_y, in_row, lid);
	}
#endif
	for (idx_t v = zo0; v < v_end; v++) {
#if VECTOR_LOADS
		const idx_t src = next;
		if (fetch && src >= 0) {
			put_fetched(tile, pf, lid);
		} else {
			stage_tile(tile, in, src, fy0, fe0, inside_yx, in_y, in_x, lid, cval);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		next = roll_source(v + 1, z_shift, z_in);
		if (fetch && next >= 0 && v + 1 < v_end) {
			fetch_tile(pf, in, next, fy0, fe0, in_y, in_row, lid);
		}
#else
		stage_tile(tile, in, roll_source(v, z_shift, z_in), fy0, fe0, inside_yx, in_y, in_x, lid, cval);
		barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if UNROLL_ROWS
#pragma unroll
#else
#pragma unroll 1
#endif
		for (int i = 0; i < IN_ROWS; i++) {
			LOCAL_PTR const ACC_T* row = mine + i * ROW_PITCH;
#if UNROLL_ROWS && !WINDOW_X
			ACC_T row_values[RX + (KX - 1) * C];
#pragma unroll
			for (int q = 0; q < RX + (KX - 1) * C; q++) {
				row_values[q] = row[SKEW(q)];
			}
#endif
#if WINDOW_X
			ACC_T win[RX];
			window_start(win, row);
#pragma unroll
			for (int jx = 0; jx < KX; jx++) {
				window_advance(win, row, jx);
#pragma unroll
				for (int ry = 0; ry < RY; ry++) {
					const int jy = i - ry;
					if (jy >= 0 && jy < KY) {
#pragma unroll
						for (int j = 0; j < KZ; j++) {
#pragma unroll
							for (int k = 0; k < BANK; k++) {
								const int wi = (((KZ - 1 - j) * KY + jy) * KX + jx) * BANK + k;
								const ACC_T w = TAP(wi);
								if (NONZERO(wi, w)) {
#pragma unroll
									for (int rx = 0; rx < RX; rx++) {
										acc[j][ry][rx][k] = fma_rn(w, WINDOW_VALUE(rx, jx), acc[j][ry][rx][k]);
									}
								}
							}
						}
					}
				}
			}
#else
#pragma unroll
			for (int ry = 0; ry < RY; ry++) {
				const int jy = i - ry;
				if (jy >= 0 && jy < KY) {
#pragma unroll
					for (int jx = 0; jx < KX; jx++) {
#pragma unroll
						for (int j = 0; j < KZ; j++) {
#pragma unroll
							for (int k = 0; k < BANK; k++) {
								const int wi = (((KZ - 1 - j) * KY + jy) * KX + jx) * BANK + k;
								const ACC_T w = TAP(wi);
								if (NONZERO(wi, w)) {
#pragma unroll
									for (int rx = 0; rx < RX; rx++) {
										acc[j][ry][rx][k] = fma_rn(w, ROW_VALUE(row, rx + jx * C), acc[j][ry][rx][k]);
									}
								}
							}
						}
					}
				}
			}
#endif
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (v - (KZ - 1) >= zo0) {
			store_block(out, acc[0], v - (KZ - 1), y0 + ly * RY, e0 + lx * RX, 0, out_y, out_row, full_tile);
		}
#pragma unroll
		for (int j = 0; j < KZ; j++) {
#pragma unroll
			for (int ry = 0; ry < RY; ry++) {
#pragma unroll
				for (int rx = 0; rx < RX; rx++) {
#pragma unroll
					for (int k = 0; k < BANK; k++) {
						acc[j][ry][rx][k] = j + 1 < KZ ? acc[j + 1][ry][rx][k] : (ACC_T)0;
					}
				}
			}
		}
	}
}
#endif
