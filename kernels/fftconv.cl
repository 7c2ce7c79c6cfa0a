// fftconv.cl: the device's half of FFT convolution around the transforms
// (internal/fftconv decides the overlap-save blocks; kernels.NewFFTConv
// describes them in GEO and plans the launches): gather a batch of blocks
// of the border-extended input into the transform buffer, multiply each
// block's spectrum by a kernel's, and scatter the blocks' valid outputs
// rounded into OUT_T.
//
// Blocks are numbered as fftconv.Geometry.Region numbers them: the batch
// index slowest, the last transformed axis fastest. A batch holds the
// nblocks blocks from first on, C order over the transform lengths
// within each, in slots: one real block per slot (REAL_BLOCKS: cuFFT's
// real-to-complex layout), or two blocks per complex slot, the even one in
// the real parts and the odd one in the imaginary parts (fft.cl's, and
// cuFFT's complex-to-complex transforms): the transforms are linear and a
// real kernel's spectrum multiplies both alike, so the inverse's real and
// imaginary parts are the two blocks' results — one complex transform
// does the work of two real ones.
//
// Gather and scatter walk rows: the values of a block along the last
// transformed axis, contiguous in the slot and (but for the batch axes'
// stride) in the input and output. Work-group (lx, ly): lx work-items
// along a row, each taking CHUNK values lx apart at a time, ly rows;
// kernels.FFTConv.GatherGrid and ScatterGrid size the grid, whose z index
// is the slot and y index the row (each loops where the grid holds
// fewer). A work-item finds its slot's blocks once, and each row's place
// in the input or output once; along the row it only adds and compares —
// the border rule maps positions only past the input's ends — and no
// value costs a division.
//
// geo: a header of 4 longs (NAXES transformed axes, NBATCH other axes,
// BLOCK_VALUES = Π lengths, BLOCK_OUTPUTS = Π outputs per block), then
// 8 longs per transformed axis (transform length, outputs per block,
// blocks, shift, input length, input stride, output length, output
// stride), then 3 longs per other axis (output length, input stride,
// output stride). The geometry is an argument, not defines, so that one
// build serves every problem of the same types, border and axes.
//
// Defines: IN_T, OUT_T, ACC_T (float), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, REAL_BLOCKS, NAXES and NBATCH (the geo header's counts: loops
// over axes unroll), GROUP (FFTConv.Group: the scatter's items a voxel).

#if REAL_BLOCKS
#define PER_SLOT 1
typedef float slot_t;
#define MAKE_SLOT(v) ((v)[0])
#define SLOT_PART(s, h) (s)
#else
#define PER_SLOT 2
typedef float2 slot_t;
#define MAKE_SLOT(v) MAKE_FLOAT2((v)[0], (v)[1])
#define SLOT_PART(s, h) ((h) == 0 ? (s).x : (s).y)
#endif

// Index arithmetic is in idx_t (common.cl): int where the host found
// every index of the problem and a batch fits (IDX32).
#define LAST (NAXES - 1)
#define BLOCK_VALUES ((idx_t)geo[2])
#define BLOCK_OUTPUTS ((idx_t)geo[3])
#define GEO_AXIS(i, f) ((idx_t)geo[4 + 8 * (i) + (f)])
#define GEO_BATCH(j, f) ((idx_t)geo[4 + 8 * NAXES + 3 * (j) + (f)])

// out_extent is a block's output count along an axis: `block`, fewer in
// the last block, which ends at the output's extent n.
INLINE idx_t out_extent(idx_t block, idx_t n, idx_t start) {
	return n - start < block ? n - start : block;
}

// fft_block is where one block lies: its first output and output count
// along each transformed axis, and the offsets of its batch axes' index
// in the input and the output. A block past the batch's (the odd slot's
// imaginary parts) is not live.
typedef struct {
	idx_t start[NAXES], count[NAXES];
	idx_t in_at, out_at;
	int live;
} fft_block;

// block_of locates block b (live or not) by the geometry.
INLINE fft_block block_of(__constant long* restrict geo, idx_t b, int live) {
	fft_block blk;
	blk.live = live;
#pragma unroll
	for (int i = LAST; i >= 0; i--) {
		const idx_t count = GEO_AXIS(i, 2), block = GEO_AXIS(i, 1);
		blk.start[i] = b % count * block;
		blk.count[i] = out_extent(block, GEO_AXIS(i, 6), blk.start[i]);
		b /= count;
	}
	blk.in_at = 0;
	blk.out_at = 0;
#pragma unroll
	for (int j = NBATCH - 1; j >= 0; j--) {
		const idx_t n = GEO_BATCH(j, 0), at = b % n;
		blk.in_at += at * GEO_BATCH(j, 1);
		blk.out_at += at * GEO_BATCH(j, 2);
		b /= n;
	}
	return blk;
}

// row_walk is a work-item's place in a gather or scatter launch: along a
// row from value x0 every lx, rows from row0 every row_step, over the
// batch's slots.
typedef struct {
	idx_t lx, x0, row0, row_step, slots;
} row_walk;

INLINE row_walk row_walk_of(long nblocks) {
	row_walk w;
	w.lx = get_local_size(0);
	w.x0 = get_local_id(0);
	w.row0 = (idx_t)get_group_id(1) * get_local_size(1) + get_local_id(1);
	w.row_step = (idx_t)get_num_groups(1) * get_local_size(1);
	w.slots = ((idx_t)nblocks + PER_SLOT - 1) / PER_SLOT;
	return w;
}

// slot_blocks locates the blocks of a batch's slot: PER_SLOT of them, from
// block first + slot·PER_SLOT on, those past the batch's nblocks not live.
INLINE void slot_blocks(__constant long* restrict geo, idx_t first, idx_t nblocks, idx_t slot, fft_block* blk) {
#pragma unroll
	for (int h = 0; h < PER_SLOT; h++) {
		const idx_t b = slot * PER_SLOT + h;
		blk[h] = block_of(geo, first + b, b < nblocks);
	}
}

// row_coords splits row (C order over the first NAXES − 1 transformed
// axes, of extents GEO_AXIS(i, field): lengths or outputs) into t; the
// first axis takes what remains, so 2-D needs no division.
INLINE void row_coords(__constant long* restrict geo, idx_t row, int field, idx_t* t) {
#pragma unroll
	for (int i = LAST - 1; i > 0; i--) {
		const idx_t n = GEO_AXIS(i, field);
		t[i] = row % n;
		row /= n;
	}
	t[0] = row;
}

// gather_row is one row of a block as the gather reads it: values
// x < reads come from input positions p0 + x along the last axis (offset
// base + p·stride, by the border rule past the ends) — or are all cval
// where the row lies outside the input on another axis (constant border,
// outside); the rest are zero.
typedef struct {
	idx_t base, p0, reads;
	int outside;
} gather_row;

INLINE gather_row gather_row_of(__constant long* restrict geo, const fft_block* blk, const idx_t* t) {
	gather_row r;
	r.base = blk->in_at;
	r.outside = 0;
	int read = blk->live;
#pragma unroll
	for (int i = 0; i < LAST; i++) {
		const idx_t length = GEO_AXIS(i, 0), block = GEO_AXIS(i, 1);
		if (t[i] >= blk->count[i] + length - block) {
			read = 0; // past the values the block's outputs read
		}
		const idx_t p = blk->start[i] - GEO_AXIS(i, 3) + t[i], n = GEO_AXIS(i, 4);
#if BORDER == BORDER_CONSTANT
		if (!inside(p, n)) {
			r.outside = 1;
		} else {
			r.base += p * GEO_AXIS(i, 5);
		}
#else
		r.base += (idx_t)border_index(p, n) * GEO_AXIS(i, 5);
#endif
	}
	const idx_t length = GEO_AXIS(LAST, 0), block = GEO_AXIS(LAST, 1);
	r.p0 = blk->start[LAST] - GEO_AXIS(LAST, 3);
	r.reads = read ? blk->count[LAST] + length - block : 0;
	return r;
}

// CHUNK is how many values of a row a work-item loads before it stores
// any (every CHUNK·lx apart): loads in flight, where one at a time leaves
// a GPU's memory waiting on latency.
#define CHUNK 4

// gather_value is value x of row r; n and stride are the last axis's
// input length and stride. Past the row's reads (even past its length)
// it is zero, and loads nothing.
INLINE float gather_value(__global const IN_T* restrict in, const gather_row* r, idx_t x, idx_t n, idx_t stride, float cval) {
	if (x >= r->reads) {
		return 0.0f;
	}
	const idx_t p = r->p0 + x;
#if BORDER == BORDER_CONSTANT
	if (r->outside || !inside(p, n)) {
		return cval;
	}
	return (float)in[r->base + p * stride];
#else
	return (float)in[r->base + (inside(p, n) ? p : (idx_t)border_index(p, n)) * stride];
#endif
}

// fftconv_gather writes every slot of the batch's blocks (an odd count's
// last imaginary parts zero): the values the block's outputs read
// (OutCount + K − 1 along each transformed axis, by the border rule), zero
// beyond them.
__kernel void fftconv_gather(
	__global const IN_T* restrict in,
	__global slot_t* restrict blocks,
	__constant long* restrict geo,
	const long first, const long nblocks,
	const float cval)
{
	const idx_t length = GEO_AXIS(LAST, 0), n = GEO_AXIS(LAST, 4), stride = GEO_AXIS(LAST, 5);
	const idx_t rows = BLOCK_VALUES / length;
	const row_walk w = row_walk_of(nblocks);
	for (idx_t slot = get_group_id(2); slot < w.slots; slot += get_num_groups(2)) {
		fft_block blk[PER_SLOT];
		slot_blocks(geo, first, nblocks, slot, blk);
		for (idx_t row = w.row0; row < rows; row += w.row_step) {
			idx_t t[NAXES];
			row_coords(geo, row, 0, t);
			gather_row r[PER_SLOT];
#pragma unroll
			for (int h = 0; h < PER_SLOT; h++) {
				r[h] = gather_row_of(geo, &blk[h], t);
			}
			__global slot_t* dst = blocks + slot * BLOCK_VALUES + row * length;
			for (idx_t x = w.x0; x < length; x += CHUNK * w.lx) {
				float v[CHUNK][PER_SLOT];
#pragma unroll
				for (int u = 0; u < CHUNK; u++) {
#pragma unroll
					for (int h = 0; h < PER_SLOT; h++) {
						v[u][h] = gather_value(in, &r[h], x + u * w.lx, n, stride, cval);
					}
				}
#pragma unroll
				for (int u = 0; u < CHUNK; u++) {
					if (x + u * w.lx < length) {
						dst[x + u * w.lx] = MAKE_SLOT(v[u]);
					}
				}
			}
		}
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

// fftconv_multiply multiplies the spectra of nslots slots (per_block
// complex values each) by the spectra of kernels k0 … k0 + group − 1 of
// the bank (kernel_spectra: per_block values a kernel), into product's
// planes, one a kernel, `plane` slots apart: each slot's spectrum is read
// once for the group.
__kernel void fftconv_multiply(
	__global const float2* restrict spectra,
	__global const float2* restrict kernel_spectra,
	__global float2* restrict product,
	const long per_block, const long nslots,
	const long k0, const long group, const long plane)
{
	const idx_t total = nslots * per_block, plane_values = plane * per_block;
	const idx_t step = (idx_t)get_local_size(0) * get_num_groups(0);
	for (idx_t i = get_global_id(0); i < total; i += step) {
		const float2 a = spectra[i];
		__global const float2* w = kernel_spectra + k0 * per_block + i % per_block;
		for (idx_t g = 0; g < group; g++) {
			const float2 wg = w[g * per_block];
			product[g * plane_values + i] = MAKE_FLOAT2(a.x * wg.x - a.y * wg.y, a.x * wg.y + a.y * wg.x);
		}
	}
}

// fftconv_scatter stores the valid outputs of every block of the batch,
// the inverse transform's first OutCount values along each transformed
// axis, for kernels k0 … k0 + group − 1 (group ≤ GROUP) of a bank of
// `bank`, whose inverse transforms are planes `plane` slots apart:
// out[voxel·bank + k], rounded and saturated as the direct method's.
// Work-items take a row's outputs kernel-fastest, so that a warp stores
// whole lines of the interleaved output (one kernel a launch wrote 4
// bytes of every 64 at a bank of 16: 70% of the Gabor bank's time;
// session 38).
__kernel void fftconv_scatter(
	__global const slot_t* restrict blocks,
	__global OUT_T* restrict out,
	__constant long* restrict geo,
	const long first, const long nblocks,
	const long k0, const long group, const long plane, const long bank)
{
	const idx_t width = GEO_AXIS(LAST, 1), ostride = GEO_AXIS(LAST, 7);
	const idx_t rows = BLOCK_OUTPUTS / width, plane_values = plane * BLOCK_VALUES;
	const row_walk w = row_walk_of(nblocks);
	for (idx_t slot = get_group_id(2); slot < w.slots; slot += get_num_groups(2)) {
		fft_block blk[PER_SLOT];
		slot_blocks(geo, first, nblocks, slot, blk);
		for (idx_t row = w.row0; row < rows; row += w.row_step) {
			idx_t t[NAXES];
			row_coords(geo, row, 1, t);
			// The row's values in the slot, and per block its first
			// output's offset and its output count (0: none valid).
			idx_t from = 0;
#pragma unroll
			for (int i = 0; i < LAST; i++) {
				from = (from + t[i]) * GEO_AXIS(i + 1, 0);
			}
			idx_t at[PER_SLOT], valid[PER_SLOT], most = 0;
#pragma unroll
			for (int h = 0; h < PER_SLOT; h++) {
				at[h] = blk[h].out_at + blk[h].start[LAST] * ostride;
				int live = blk[h].live;
#pragma unroll
				for (int i = 0; i < LAST; i++) {
					live = live && t[i] < blk[h].count[i];
					at[h] += (blk[h].start[i] + t[i]) * GEO_AXIS(i, 7);
				}
				valid[h] = live ? blk[h].count[LAST] : 0;
				most = valid[h] > most ? valid[h] : most;
			}
			__global const slot_t* src = blocks + slot * BLOCK_VALUES + from;
			// Item i of the row is kernel k0 + i % GROUP of output
			// i / GROUP: neighbouring work-items store neighbouring
			// values of the interleaved output.
			const idx_t items = most * GROUP;
			for (idx_t i = w.x0; i < items; i += CHUNK * w.lx) {
				slot_t s[CHUNK];
#pragma unroll
				for (int u = 0; u < CHUNK; u++) {
					const idx_t item = i + u * w.lx, x = item / GROUP, g = item % GROUP;
					if (item < items && g < group) {
						s[u] = src[g * plane_values + x];
					}
				}
#pragma unroll
				for (int u = 0; u < CHUNK; u++) {
					const idx_t item = i + u * w.lx, x = item / GROUP, g = item % GROUP;
#pragma unroll
					for (int h = 0; h < PER_SLOT; h++) {
						if (x < valid[h] && g < group) {
							out[(at[h] + x * ostride) * bank + k0 + g] = to_output(SLOT_PART(s[u], h));
						}
					}
				}
			}
		}
	}
}
