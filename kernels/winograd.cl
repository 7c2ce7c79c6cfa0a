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
// The taps argument holds Bᵀ (N×N), then Aᵀ (M×N), then U (BANK × N^DIMS,
// row-major over the kernel axes), all float. Zero coefficients are
// skipped, as the CPU engine does (the same roundings, not the same
// order of contraction).
//
// Defines: those of direct.cl (IN_T, OUT_T, ACC_T=float, OUT_INTEGER, …,
// BORDER, BANK), DIMS, M, R, SHIFT0, SHIFT1, SHIFT2 (each kernel axis's
// Problem.Shift).
//
// This is the correct, simple form (one tile per work-item, the
// transforms read from constant memory); docs/perf/winograd.md designs the
// fast one (the bank's products as a batched GEMM over tiles × filters).

#define N (M + R - 1)
#if DIMS == 3
#define NT (N * N * N)
#define MT (M * M * M)
#else
#define NT (N * N)
#define MT (M * M)
#endif
#define BT_AT 0
#define AT_AT (N * N)
#define U_AT (N * N + M * N)

// wg_axis multiplies axis a of src (DIMS axes, lengths len) by the rows ×
// len[a] matrix mat, into dst; len[a] becomes rows.
INLINE void wg_axis(__private const float* src, __private float* dst, __private int* len, int a,
	__constant ACC_T* restrict mat, int rows)
{
	int outer = 1, inner = 1;
	for (int i = 0; i < a; i++) {
		outer *= len[i];
	}
	for (int i = a + 1; i < DIMS; i++) {
		inner *= len[i];
	}
	const int cols = len[a];
	for (int o = 0; o < outer; o++) {
		for (int r = 0; r < rows; r++) {
			for (int in = 0; in < inner; in++) {
				float s = 0;
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
	len[a] = rows;
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
	if (gid >= total) {
		return;
	}
	const long P[4] = {p0, p1, p2, p3};
	const long NN[3] = {n0, n1, n2};
	const long O[3] = {o0, o1, o2};
	const int S[3] = {SHIFT0, SHIFT1, SHIFT2};
	long pi[4], ti[3];
	long rest = gid;
	pi[DIMS] = rest % P[DIMS];
	rest /= P[DIMS];
	for (int a = DIMS - 1; a >= 0; a--) {
		const long tiles = (O[a] + M - 1) / M;
		ti[a] = rest % tiles;
		rest /= tiles;
		pi[a] = rest % P[a];
		rest /= P[a];
	}

	// Gather the tile by the border rule.
	float d[NT], e[NT], f[NT];
	for (int t = 0; t < NT; t++) {
		int c[3];
		int r = t;
		for (int a = DIMS - 1; a >= 0; a--) {
			c[a] = r % N;
			r /= N;
		}
		long off = pi[0];
		int outside = 0;
		for (int a = 0; a < DIMS; a++) {
			long q = ti[a] * M + c[a] - S[a];
#if BORDER == BORDER_CONSTANT
			if (!inside(q, NN[a])) {
				outside = 1;
				q = 0;
			}
#else
			q = border_index(q, NN[a]);
#endif
			off = (off * NN[a] + q) * P[a + 1] + pi[a + 1];
		}
		d[t] = outside ? cval : to_acc(in[off]);
	}

	// V = Bᵀ d B, axis by axis (into e for two axes, d for three).
	int len[3] = {N, N, N};
	wg_axis(d, e, len, 0, taps + BT_AT, N);
	wg_axis(e, d, len, 1, taps + BT_AT, N);
#if DIMS == 3
	wg_axis(d, e, len, 2, taps + BT_AT, N);
#define V e
#define Y0 d
#else
#define V d
#define Y0 e
#endif

	// Output origin over the gaps.
	for (int k = 0; k < BANK; k++) {
		__constant ACC_T* restrict u = taps + U_AT + k * NT;
		for (int t = 0; t < NT; t++) {
			f[t] = u[t] * V[t];
		}
		int ylen[3] = {N, N, N};
		wg_axis(f, Y0, ylen, 0, taps + AT_AT, M);
		wg_axis(Y0, f, ylen, 1, taps + AT_AT, M);
#if DIMS == 3
		wg_axis(f, Y0, ylen, 2, taps + AT_AT, M);
#define Y Y0
#else
#define Y f
#endif
		for (int t = 0; t < MT; t++) {
			int c[3];
			int r = t;
			for (int a = DIMS - 1; a >= 0; a--) {
				c[a] = r % M;
				r /= M;
			}
			long off = pi[0];
			int inside_all = 1;
			for (int a = 0; a < DIMS; a++) {
				const long o = ti[a] * M + c[a];
				inside_all = inside_all && o < O[a];
				off = (off * O[a] + o) * P[a + 1] + pi[a + 1];
			}
			if (inside_all) {
				out[off * BANK + k] = to_output(Y[t]);
			}
		}
#undef Y
	}
}
