// fft.cl: batched 1-D complex FFTs of float2 data along any axis — the
// portable transforms of FFT convolution where no vendor FFT library
// serves (every OpenCL device; kernels.NewFFTConv plans them).
//
// Stockham autosort: a transform of length N (2^a·3^b·5^c·7^d) is a
// sequence of passes of radix R ∈ {4, 2, 3, 5, 7} (fft_radix's order);
// before a pass, sub-transforms of length p are done, and butterfly j
// (0 ≤ j < N/R, k = j mod p) reads x[j + r·N/R], multiplies value r by
// ω^(r·k) (ω = e^(∓2πi/(p·R))), takes their R-point DFT and writes
// y[(j − k)·R + k + r·p]; after the last pass the result is in natural
// order. Roots of unity come from a table (roots[m] = e^(−2πi·m/N),
// computed in float64 and rounded once by the host), conjugated for the
// inverse, which is unnormalised.
//
// A line of a batch is the N values base + t·stride (t < N) with
// base = (line / stride)·N·stride + line mod stride: lines along any axis
// of C-ordered blocks, stride being the product of the lengths after it.
//
// fft_local holds one line in local memory through all its passes
// (lengths up to FFT_LOCAL_MAX, defined); fft_pass is one pass over every
// line in global memory, any length.

#define FFT_MAX_RADIX 7

// fft_radix is the radix of the next pass when m values remain in each
// sub-transform; the host allows only lengths of these factors.
INLINE int fft_radix(long m) {
	if (m % 4 == 0) {
		return 4;
	}
	if (m % 2 == 0) {
		return 2;
	}
	if (m % 3 == 0) {
		return 3;
	}
	return m % 5 == 0 ? 5 : 7;
}

INLINE float2 cmul(float2 a, float2 b) {
	return MAKE_FLOAT2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

INLINE float2 cadd(float2 a, float2 b) { return MAKE_FLOAT2(a.x + b.x, a.y + b.y); }

INLINE float2 csub(float2 a, float2 b) { return MAKE_FLOAT2(a.x - b.x, a.y - b.y); }

// root is ω_N^m (forward) or its conjugate (inverse).
INLINE float2 fft_root(__global const float2* restrict roots, long m, int inverse) {
	const float2 w = roots[m];
	return inverse ? MAKE_FLOAT2(w.x, -w.y) : w;
}

// fft_butterfly transforms u (the R values of butterfly j of a pass with
// sub-transforms of length p, k = j mod p) in place: twiddles, then the
// R-point DFT.
INLINE void fft_butterfly(float2* u, int radix, long k, long p, long n,
	__global const float2* restrict roots, int inverse)
{
	const long unit = n / (p * radix); // ω = ω_N^unit
	for (int r = 1; r < radix; r++) {
		u[r] = cmul(u[r], fft_root(roots, r * k * unit, inverse));
	}
	if (radix == 2) {
		const float2 a = u[0], b = u[1];
		u[0] = cadd(a, b);
		u[1] = csub(a, b);
		return;
	}
	if (radix == 4) {
		const float2 t0 = cadd(u[0], u[2]), t1 = csub(u[0], u[2]);
		const float2 t2 = cadd(u[1], u[3]), t3 = csub(u[1], u[3]);
		// −i·t3 forward (ω_4 = −i), +i·t3 inverse.
		const float2 t3i = inverse ? MAKE_FLOAT2(-t3.y, t3.x) : MAKE_FLOAT2(t3.y, -t3.x);
		u[0] = cadd(t0, t2);
		u[1] = cadd(t1, t3i);
		u[2] = csub(t0, t2);
		u[3] = csub(t1, t3i);
		return;
	}
	// 3, 5, 7: the DFT by its definition, ω_R^m = ω_N^(m·N/R).
	float2 v[FFT_MAX_RADIX];
	const long order = n / radix;
	for (int s = 0; s < radix; s++) {
		float2 acc = u[0];
		for (int r = 1; r < radix; r++) {
			acc = cadd(acc, cmul(u[r], fft_root(roots, ((r * s) % radix) * order, inverse)));
		}
		v[s] = acc;
	}
	for (int s = 0; s < radix; s++) {
		u[s] = v[s];
	}
}

// fft_pass is one Stockham pass (sub-transforms of length p done, radix
// `radix` next) over every line of length n, from src to dst. Consecutive
// work-items take consecutive lines of a stride, so that strided axes
// read and write whole rows at once.
__kernel void fft_pass(
	__global const float2* restrict src,
	__global float2* restrict dst,
	__global const float2* restrict roots,
	const long n, const long p, const long radix_long, const long stride, const long lines,
	const int inverse)
{
	const int radix = (int)radix_long;
	const long butterflies = n / radix;
	const long total = lines * butterflies;
	const long step = (long)get_local_size(0) * get_num_groups(0);
	for (long index = get_global_id(0); index < total; index += step) {
		const long inner = index % stride;
		const long rest = index / stride;
		const long j = rest % butterflies;
		const long base = rest / butterflies * n * stride + inner;
		float2 u[FFT_MAX_RADIX];
		for (int r = 0; r < radix; r++) {
			u[r] = src[base + (j + r * butterflies) * stride];
		}
		const long k = j % p;
		fft_butterfly(u, radix, k, p, n, roots, inverse);
		const long o = (j - k) * radix + k;
		for (int r = 0; r < radix; r++) {
			dst[base + (o + r * p) * stride] = u[r];
		}
	}
}

#ifdef FFT_LOCAL_MAX
// fft_local transforms whole lines of length n ≤ FFT_LOCAL_MAX in place,
// one work-group per line at a time, every pass in local memory.
__kernel void fft_local(
	__global float2* restrict data,
	__global const float2* restrict roots,
	const long n, const long lines, const long stride,
	const int inverse)
{
	__local float2 buf[2 * FFT_LOCAL_MAX];
	const long lid = get_local_id(0), lsize = get_local_size(0);
	for (long line = get_group_id(0); line < lines; line += get_num_groups(0)) {
		const long base = line / stride * n * stride + line % stride;
		for (long t = lid; t < n; t += lsize) {
			buf[t] = data[base + t * stride];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		long from = 0, to = n;
		for (long p = 1; p < n;) {
			const int radix = fft_radix(n / p);
			const long butterflies = n / radix;
			for (long j = lid; j < butterflies; j += lsize) {
				float2 u[FFT_MAX_RADIX];
				for (int r = 0; r < radix; r++) {
					u[r] = buf[from + j + r * butterflies];
				}
				const long k = j % p;
				fft_butterfly(u, radix, k, p, n, roots, inverse);
				const long o = (j - k) * radix + k;
				for (int r = 0; r < radix; r++) {
					buf[to + o + r * p] = u[r];
				}
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			from = n - from;
			to = n - to;
			p *= radix;
		}
		for (long t = lid; t < n; t += lsize) {
			data[base + t * stride] = buf[from + t];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}
#endif
