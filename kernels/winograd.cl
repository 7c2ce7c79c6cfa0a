// winograd.cl: the Winograd method (fast family), CUDA and OpenCL: a bank
// of 3×3, 5×5 (two axes) or 3×3×3 (three axes) kernels in tiles
// F(M^DIMS, R^DIMS) (internal/winograd builds the transforms, the
// transformed weights U = G g Gᵀ and the error bound). Each work-item
// computes one output tile for the whole bank: it gathers the tile's
// N^DIMS inputs (N = M + R − 1) by the direct kernels' border rule
// (common.cl's border_index; cval outside for the constant border),
// transforms them once (V = Bᵀ d B, per axis), and for each kernel k
// multiplies elementwise by U_k and transforms back (Y = Aᵀ M A), storing
// the tile's outputs that lie inside, converted by to_output (rounding
// and saturation as nd.Round), interleaved for a bank.
//
// Canonical form: the kernel axes K0 … K(DIMS−1) with the axes between
// them merged into gaps P0 … P(DIMS) (extent 1 taps, the same length in
// and out):
//
//   input  [P0][N0][P1][N1][P2]([N2][P3])
//   output [P0][O0][P1][O1][P2]([O2][P3])[BANK]
//
// Work-items are numbered with P(DIMS) fastest, then the last kernel
// axis's tiles, then P(DIMS−1), …: neighbouring work-items read
// neighbouring samples of a channel-last image.
//
// The taps argument holds U (BANK × N^DIMS, row-major over the kernel
// axes), float. Bᵀ (N×N) and Aᵀ (M×N) are the tables below, which
// TestWinogradTables checks against internal/winograd's; every loop is
// unrolled, so the compiler folds their zeros and ones and the tile's
// arrays live in registers. Zero coefficients add nothing, as in the CPU
// engine (the same roundings, not the same order of contraction).
//
// Defines: those of direct.cl (IN_T, OUT_T, ACC_T=float, OUT_INTEGER, …,
// BORDER, BANK), DIMS, M, R, SHIFT0, SHIFT1, SHIFT2 (each kernel axis's
// Problem.Shift), LOCAL (work-items a group), STAGE_OUT (KG > 0: outputs
// go through local memory, KG filters at a time, and the group writes each
// voxel's KG values and a tile row's voxels as contiguous runs — a warp
// stores whole sectors — instead of every work-item storing with a
// stride of BANK; 0: direct stores).
//
// This is the simple form (one tile per work-item, n^d loads of its own,
// interleaved stores of stride BANK); docs/perf/winograd.md designs the
// fast one (staged input, outputs through shared memory in whole lines).

// Bᵀ and Aᵀ of F(M, R), row-major (internal/winograd.NewTransform's).
#if M == 2 && R == 3
#define WG_BT_TABLE {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, -1, 0, 1}
#define WG_AT_TABLE {1, 1, 1, 0, 0, 1, -1, 1}
#elif M == 4 && R == 3
#define WG_BT_TABLE {4, 0, -5, 0, 1, 0, 0, 4, 4, -1, -1, 0, 0, -4, 4, 1, -1, 0, 0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1}
#define WG_AT_TABLE {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1}
#elif M == 2 && R == 5
#define WG_BT_TABLE {4, 0, -5, 0, 1, 0, 0, 4, 4, -1, -1, 0, 0, -4, 4, 1, -1, 0, 0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1}
#define WG_AT_TABLE {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 1}
#elif M == 4 && R == 5
#define WG_BT_TABLE {4, 0, -21, 0, 21, 0, -4, 0, 0, -4, -4, 17, 17, -4, -4, 0, 0, 4, -4, -17, 17, 4, -4, 0, 0, 2, 1, -10, -5, 8, 4, 0, 0, -2, 1, 10, -5, -8, 4, 0, 0, 4, 8, -5, -10, 1, 2, 0, 0, -4, 8, 5, -10, -1, 2, 0, 0, -4, 0, 21, 0, -21, 0, 4}
#define WG_AT_TABLE {1, 1, 1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0.5, -0.5, 0, 0, 1, 1, 4, 4, 0.25, 0.25, 0, 0, 1, -1, 8, -8, 0.125, -0.125, 1}
#else
#error "winograd.cl: no tables for this tile"
#endif

#define N (M + R - 1)
#if DIMS == 3
#define NT (N * N * N)
#define MT (M * M * M)
#else
#define NT (N * N)
#define MT (M * M)
#endif

// wg_axis multiplies the middle axis of src, viewed as [outer][cols][inner],
// by the rows × cols matrix mat, into dst [outer][rows][inner]. Every
// argument but the arrays is a compile-time constant where it is called,
// and the loops unroll.
INLINE void wg_axis(__private const float* src, __private float* dst, const float* mat,
	const int outer, const int cols, const int inner, const int rows)
{
#pragma unroll
	for (int o = 0; o < outer; o++) {
#pragma unroll
		for (int r = 0; r < rows; r++) {
#pragma unroll
			for (int in = 0; in < inner; in++) {
				float s = 0;
#pragma unroll
				for (int c = 0; c < cols; c++) {
					const float w = mat[r * cols + c];
					if (w != 0) {
						s += w * src[(o * cols + c) * inner + in];
					}
				}
				dst[(o * rows + r) * inner + in] = s;
			}
		}
	}
}

// wg_tile decodes work-item gid into its gap positions pi and tile ti.
INLINE void wg_tile(long gid, const long* P, const long* O, long* pi, long* ti)
{
	long rest = gid;
	pi[DIMS] = rest % P[DIMS];
	rest /= P[DIMS];
#pragma unroll
	for (int a = DIMS - 1; a >= 0; a--) {
		const long tiles = (O[a] + M - 1) / M;
		ti[a] = rest % tiles;
		rest /= tiles;
		pi[a] = rest % P[a];
		rest /= P[a];
	}
}

// wg_out is the output voxel index of output t of tile (pi, ti), or −1
// where it lies past the output's end.
INLINE long wg_out(int t, const long* P, const long* O, const long* pi, const long* ti)
{
#if DIMS == 3
	const long y0 = ti[0] * M + t / (M * M), y1 = ti[1] * M + t / M % M, y2 = ti[2] * M + t % M;
	if (y0 >= O[0] || y1 >= O[1] || y2 >= O[2]) {
		return -1;
	}
	return ((((pi[0] * O[0] + y0) * P[1] + pi[1]) * O[1] + y1) * P[2] + pi[2]) * O[2] * P[3] + y2 * P[3] + pi[3];
#else
	const long y0 = ti[0] * M + t / M, y1 = ti[1] * M + t % M;
	if (y0 >= O[0] || y1 >= O[1]) {
		return -1;
	}
	return (((pi[0] * O[0] + y0) * P[1] + pi[1]) * O[1] + y1) * P[2] + pi[2];
#endif
}

__kernel void correlate_winograd(
	__global const IN_T* restrict in,
	__global OUT_T* restrict out,
	__constant ACC_T* restrict taps,
	__constant int* restrict unused,
	const long p0, const long p1, const long p2, const long p3, // the gaps
	const long n0, const long n1, const long n2, // kernel axes' input lengths
	const long o0, const long o1, const long o2, // and output lengths
	const long total, // work-items: tiles × gap positions
	const ACC_T cval)
{
	const long gid = get_global_id(0);
#if STAGE_OUT
	// Every work-item reaches the barriers; those past the end compute a
	// tile of their own (gid wrapped) and store nothing.
	__local float stage[LOCAL * MT * STAGE_OUT];
	const int active = gid < total;
	const int lid = get_local_id(0);
	const long group0 = gid - lid;
#else
	if (gid >= total) {
		return;
	}
#endif
	const float bt[N * N] = WG_BT_TABLE;
	const float at[M * N] = WG_AT_TABLE;
	const long P[4] = {p0, p1, p2, p3};
	const long NN[3] = {n0, n1, n2};
	const long O[3] = {o0, o1, o2};
	const int S[3] = {SHIFT0, SHIFT1, SHIFT2};
	long pi[4], ti[3];
#if STAGE_OUT
	wg_tile(active ? gid : 0, P, O, pi, ti);
#else
	wg_tile(gid, P, O, pi, ti);
#endif

	// Each kernel axis's n input positions, mapped by the border rule
	// once (−1: cval), and the tile's n^d inputs gathered.
	long pos[DIMS][N];
#pragma unroll
	for (int a = 0; a < DIMS; a++) {
#pragma unroll
		for (int c = 0; c < N; c++) {
			long q = ti[a] * M + c - S[a];
#if BORDER == BORDER_CONSTANT
			pos[a][c] = inside(q, NN[a]) ? q : -1;
#else
			pos[a][c] = border_index(q, NN[a]);
#endif
		}
	}
	float d[NT], e[NT], f[NT];
#pragma unroll
	for (int t = 0; t < NT; t++) {
#if DIMS == 3
		const int c0 = t / (N * N), c1 = t / N % N, c2 = t % N;
		const long q0 = pos[0][c0], q1 = pos[1][c1], q2 = pos[2][c2];
		const int outside = q0 < 0 || q1 < 0 || q2 < 0;
		const long off = ((((pi[0] * NN[0] + q0) * P[1] + pi[1]) * NN[1] + q1) * P[2] + pi[2]) * NN[2] * P[3]
			+ q2 * P[3] + pi[3];
#else
		const int c0 = t / N, c1 = t % N;
		const long q0 = pos[0][c0], q1 = pos[1][c1];
		const int outside = q0 < 0 || q1 < 0;
		const long off = (((pi[0] * NN[0] + q0) * P[1] + pi[1]) * NN[1] + q1) * P[2] + pi[2];
#endif
		d[t] = outside ? cval : to_acc(in[off]);
	}

	// V = Bᵀ d B, axis by axis (into d for two axes, e for three).
#if DIMS == 3
	wg_axis(d, e, bt, 1, N, N * N, N);
	wg_axis(e, d, bt, N, N, N, N);
	wg_axis(d, e, bt, N * N, N, 1, N);
#define V e
#define Y0 d
#else
	wg_axis(d, e, bt, 1, N, N, N);
	wg_axis(e, d, bt, N, N, 1, N);
#define V d
#define Y0 e
#endif

	for (int k = 0; k < BANK; k++) {
		__constant ACC_T* restrict u = taps + k * NT;
#pragma unroll
		for (int t = 0; t < NT; t++) {
			f[t] = u[t] * V[t];
		}
		// Y = Aᵀ M A: the shape goes from N^DIMS to M^DIMS axis by axis.
#if DIMS == 3
		wg_axis(f, Y0, at, 1, N, N * N, M);
		wg_axis(Y0, f, at, M, N, N, M);
		wg_axis(f, Y0, at, M * M, N, 1, M);
#define Y Y0
#else
		wg_axis(f, Y0, at, 1, N, N, M);
		wg_axis(Y0, f, at, M, N, 1, M);
#define Y f
#endif
#if STAGE_OUT
		// Stage this filter's outputs; after every KG filters (or the
		// bank's last), the group writes them: element i of the staged
		// block is value i % kg of voxel i / kg (tile (i / kg) / MT of the
		// group), so consecutive work-items store consecutive addresses.
		const int kg = k % STAGE_OUT;
#pragma unroll
		for (int t = 0; t < MT; t++) {
			stage[(lid * MT + t) * STAGE_OUT + kg] = Y[t];
		}
		if (kg == STAGE_OUT - 1 || k == BANK - 1) {
			const int kn = kg + 1;
			const int k0 = k - kg;
			barrier(CLK_LOCAL_MEM_FENCE);
			for (int i = lid; i < LOCAL * MT * kn; i += LOCAL) {
				const int v = i / kn, j = i % kn;
				const long g = group0 + v / MT;
				if (g < total) {
					long qi[4], qt[3];
					wg_tile(g, P, O, qi, qt);
					const long off = wg_out(v % MT, P, O, qi, qt);
					if (off >= 0) {
						out[off * BANK + k0 + j] = to_output(stage[v * STAGE_OUT + j]);
					}
				}
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}
#else
#pragma unroll
		for (int t = 0; t < MT; t++) {
			const long off = wg_out(t, P, O, pi, ti);
			if (off >= 0) {
				out[off * BANK + k] = to_output(Y[t]);
			}
		}
#endif
#undef Y
	}
}
