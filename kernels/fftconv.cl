// fftconv.cl: the device's half of FFT convolution around the transforms
// (internal/fftconv decides the overlap-save blocks; kernels.NewFFTConv
// describes them in GEO): gather a batch of blocks of the border-extended
// input into the transform buffer, multiply each block's spectrum by a
// kernel's, and scatter the blocks' valid outputs rounded into OUT_T.
//
// Blocks are numbered as fftconv.Geometry.Region numbers them: the batch
// index slowest, the last transformed axis fastest. A batch holds the
// nblocks blocks from first on, C order over the transform lengths
// within each (BLOCK_AT): real values, block after block (REAL_BLOCKS:
// cuFFT's real-to-complex layout), or two blocks per complex block, the
// even one in the real parts and the odd one in the imaginary parts
// (fft.cl's complex transforms): the transforms are linear and a real
// kernel's spectrum multiplies both alike, so the inverse's real and
// imaginary parts are the two blocks' results — one complex transform
// does the work of two real ones.
//
// geo: a header of 4 longs (NAXES transformed axes, NBATCH other axes,
// BLOCK_VALUES = Π lengths, BLOCK_OUTPUTS = Π outputs per block), then
// 8 longs per transformed axis (transform length, outputs per block,
// blocks, shift, input length, input stride, output length, output
// stride), then 3 longs per other axis (output length, input stride,
// output stride). The geometry is an argument, not defines, so that one
// build serves every problem of the same types and border.
//
// Defines: IN_T, OUT_T, ACC_T (float), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, REAL_BLOCKS.

#if REAL_BLOCKS
#define BLOCK_AT(b, e) ((b) * BLOCK_VALUES + (e))
#define BLOCKS_GATHERED(n) (n)
#else
#define BLOCK_AT(b, e) ((((b) / 2) * BLOCK_VALUES + (e)) * 2 + (b) % 2)
// An odd count leaves the last imaginary parts to zero.
#define BLOCKS_GATHERED(n) (((n) + 1) / 2 * 2)
#endif

// Index arithmetic is in idx_t (common.cl): int where the host found
// every index of the problem and a batch fits (IDX32), which makes the
// per-value divisions several times cheaper on GPUs.
#define NAXES ((int)geo[0])
#define NBATCH ((int)geo[1])
#define BLOCK_VALUES ((idx_t)geo[2])
#define BLOCK_OUTPUTS ((idx_t)geo[3])
#define GEO_AXIS(i, f) ((idx_t)geo[4 + 8 * (i) + (f)])
#define GEO_BATCH(j, f) ((idx_t)geo[4 + 8 * NAXES + 3 * (j) + (f)])

// out_extent is a block's output count along an axis: `block`, fewer in
// the last block, which ends at the output's extent n.
INLINE idx_t out_extent(idx_t block, idx_t n, idx_t start) {
	return n - start < block ? n - start : block;
}

// fftconv_gather writes the extended input of every block of the batch:
// the values the block's outputs read (OutCount + K − 1 along each
// transformed axis, by the border rule), zero beyond them.
__kernel void fftconv_gather(
	__global const IN_T* restrict in,
	__global float* restrict blocks,
	__constant long* restrict geo,
	const long first, const long nblocks,
	const float cval)
{
	const idx_t total = BLOCKS_GATHERED(nblocks) * BLOCK_VALUES;
	const idx_t step = (idx_t)get_local_size(0) * get_num_groups(0);
	for (idx_t index = get_global_id(0); index < total; index += step) {
		const idx_t e0 = index % BLOCK_VALUES, blk = index / BLOCK_VALUES;
		idx_t e = e0, b = (idx_t)first + blk;
		idx_t at = 0;
		int read = 1, outside = 0;
		for (int i = NAXES - 1; i >= 0; i--) {
			const idx_t length = GEO_AXIS(i, 0), block = GEO_AXIS(i, 1), count = GEO_AXIS(i, 2);
			const idx_t t = e % length, which = b % count;
			e /= length;
			b /= count;
			const idx_t out_start = which * block;
			const idx_t out_count = out_extent(block, GEO_AXIS(i, 6), out_start);
			if (t >= out_count + length - block) {
				read = 0; // past the values the block's outputs read
			}
			const idx_t p = out_start - GEO_AXIS(i, 3) + t, n = GEO_AXIS(i, 4);
#if BORDER == BORDER_CONSTANT
			if (!inside(p, n)) {
				outside = 1;
			} else {
				at += p * GEO_AXIS(i, 5);
			}
#else
			at += (idx_t)border_index(p, n) * GEO_AXIS(i, 5);
#endif
		}
		for (int j = NBATCH - 1; j >= 0; j--) {
			at += (b % GEO_BATCH(j, 0)) * GEO_BATCH(j, 1);
			b /= GEO_BATCH(j, 0);
		}
		float v = 0.0f;
		if (read && blk < nblocks) {
			v = outside ? cval : (float)in[at];
		}
		blocks[BLOCK_AT(blk, e0)] = v;
	}
}

// fftconv_kernel_spectrum turns a kernel block's spectrum (n complex
// values) into what multiplies every block's: conjugated (correlation,
// not convolution) and scaled by 1/P (the inverse transform is
// unnormalised).
__kernel void fftconv_kernel_spectrum(__global float2* restrict spectrum, const long n, const float scale)
{
	const long step = (long)get_local_size(0) * get_num_groups(0);
	for (long i = get_global_id(0); i < n; i += step) {
		const float2 v = spectrum[i];
		spectrum[i] = MAKE_FLOAT2(scale * v.x, -scale * v.y);
	}
}

// fftconv_multiply multiplies the spectra of nblocks blocks (per_block
// complex values each) by the kernel's.
__kernel void fftconv_multiply(
	__global const float2* restrict spectra,
	__global const float2* restrict kernel_spectrum,
	__global float2* restrict product,
	const long per_block, const long nblocks)
{
	const idx_t total = nblocks * per_block;
	const idx_t step = (idx_t)get_local_size(0) * get_num_groups(0);
	for (idx_t i = get_global_id(0); i < total; i += step) {
		const float2 a = spectra[i], w = kernel_spectrum[i % per_block];
		product[i] = MAKE_FLOAT2(a.x * w.x - a.y * w.y, a.x * w.y + a.y * w.x);
	}
}

// fftconv_scatter stores the valid outputs of every block of the batch,
// the inverse transform's first OutCount values along each transformed
// axis, for kernel k of a bank of `bank`: out[voxel·bank + k], rounded and
// saturated as the direct method's.
__kernel void fftconv_scatter(
	__global const float* restrict blocks,
	__global OUT_T* restrict out,
	__constant long* restrict geo,
	const long first, const long nblocks,
	const long k, const long bank)
{
	const idx_t total = nblocks * BLOCK_OUTPUTS;
	const idx_t step = (idx_t)get_local_size(0) * get_num_groups(0);
	for (idx_t index = get_global_id(0); index < total; index += step) {
		idx_t e = index % BLOCK_OUTPUTS;
		const idx_t blk = index / BLOCK_OUTPUTS;
		idx_t b = (idx_t)first + blk;
		idx_t at = 0, from = 0, stride = 1;
		int valid = 1;
		for (int i = NAXES - 1; i >= 0; i--) {
			const idx_t length = GEO_AXIS(i, 0), block = GEO_AXIS(i, 1), count = GEO_AXIS(i, 2);
			const idx_t t = e % block, which = b % count;
			e /= block;
			b /= count;
			const idx_t out_start = which * block;
			if (t >= out_extent(block, GEO_AXIS(i, 6), out_start)) {
				valid = 0;
			}
			at += (out_start + t) * GEO_AXIS(i, 7);
			from += t * stride;
			stride *= length;
		}
		if (!valid) {
			continue;
		}
		for (int j = NBATCH - 1; j >= 0; j--) {
			at += (b % GEO_BATCH(j, 0)) * GEO_BATCH(j, 2);
			b /= GEO_BATCH(j, 0);
		}
		out[at * bank + k] = to_output(blocks[BLOCK_AT(blk, from)]);
	}
}
