// direct.cl: direct correlation, any rank, dtype, border, origin, mode and
// bank size: out[i] = Σ_j w[j] · x̃[i + j − shift] (DESIGN §1, as package nd
// normalises it).
//
// The problem arrives in a canonical form (kernels.Direct builds it):
//
//   input  [outer planes…][Y][X·C]   output [outer…][Y'][X'·C][BANK]
//
// X is the last axis the kernel spans, C the samples that follow it (axes
// the kernel does not span, such as colour channels, merged), Y the axis
// before X and "outer" every axis before Y, up to NOUTER of them, each with
// its own kernel extent. A work-group computes a TILE_Y × TILE_X tile of
// output elements of one outer plane for all BANK kernels: for each outer
// tap it stages the input tile and its halo, border rule applied, in local
// memory, then every work-item sums the KY × KX taps from there.
//
// Defines: IN_T, OUT_T, ACC_T (float, or double with ACC_DOUBLE), OUT_INTEGER,
// OUT_MIN, OUT_MAX, BORDER, BANK, KY, KX, SHIFT_Y, SHIFT_X, C, NOUTER,
// OUTER_TAPS (product of the outer extents), TILE_Y, TILE_X, and TILED (0:
// read taps' inputs from global memory, for tiles too large for local
// memory).
//
// outer holds 4 ints per outer axis: input length, output length, kernel
// extent, shift. taps holds OUTER_TAPS × KY × KX × BANK weights, bank
// fastest.

#define HALO_X ((KX - 1) * C)
#define ROW_ELEMS (TILE_X + HALO_X)
#define TILE_ROWS (TILE_Y + KY - 1)

__kernel void correlate_direct(
	__global const IN_T* restrict in,
	__global OUT_T* restrict out,
	__constant ACC_T* restrict taps,
	__constant int* restrict outer,
	const long in_y, const long in_x, // input Y length, X length in pixels
	const long out_y, const long out_x, // output lengths
	const long planes, // number of output outer planes
	const ACC_T cval)
{
	const long out_row = out_x * C;
	const long out_plane = out_y * out_row;
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const long e0 = (long)get_group_id(0) * TILE_X; // first output element of the tile in X·C
	const long y0 = (long)get_group_id(1) * TILE_Y;
	const long e = e0 + lx, y = y0 + ly;
	const int active = e < out_row && y < out_y;
#if TILED
	__local ACC_T tile[TILE_ROWS][ROW_ELEMS];
#endif

	for (long plane = get_group_id(2); plane < planes; plane += get_num_groups(2)) {
		ACC_T acc[BANK];
		for (int k = 0; k < BANK; k++) {
			acc[k] = (ACC_T)0;
		}
		for (int t = 0; t < OUTER_TAPS; t++) {
			const long src = outer_plane(outer, plane, t);
			__constant ACC_T* w = taps + (long)t * KY * KX * BANK;
#if TILED
			// Stage the tile with its halo: rows y0 − SHIFT_Y …, elements
			// e0 − SHIFT_X·C …, each mapped by the border rule.
			for (int r = ly; r < TILE_ROWS; r += TILE_Y) {
				const long py = y0 + r - SHIFT_Y;
				for (int i = lx; i < ROW_ELEMS; i += TILE_X) {
					const long pe = e0 + i - SHIFT_X * C;
					const long px = position_of(pe);
					tile[r][i] = load_sample(in, src, py, px, pe - px * C, in_y, in_x, cval);
				}
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			if (active) {
				for (int jy = 0; jy < KY; jy++) {
					for (int jx = 0; jx < KX; jx++) {
						const ACC_T v = tile[ly + jy][lx + jx * C];
						for (int k = 0; k < BANK; k++) {
							acc[k] = accumulate(acc[k], w[(jy * KX + jx) * BANK + k], v);
						}
					}
				}
			}
			barrier(CLK_LOCAL_MEM_FENCE);
#else
			if (active) {
				const long px0 = e / C, c = e - px0 * C;
				for (int jy = 0; jy < KY; jy++) {
					const long py = y + jy - SHIFT_Y;
					for (int jx = 0; jx < KX; jx++) {
						const ACC_T v = load_sample(in, src, py, px0 + jx - SHIFT_X, c, in_y, in_x, cval);
						for (int k = 0; k < BANK; k++) {
							acc[k] = accumulate(acc[k], w[(jy * KX + jx) * BANK + k], v);
						}
					}
				}
			}
#endif
		}
		if (active) {
			__global OUT_T* o = out + ((plane * out_plane + y * out_row + e) * BANK);
			for (int k = 0; k < BANK; k++) {
				o[k] = to_output(acc[k]);
			}
		}
	}
}
