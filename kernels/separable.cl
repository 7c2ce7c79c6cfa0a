// separable.cl: one pass of a separable correlation — the 1-D correlation
// of every line along one axis with that axis's factor (DESIGN §1,
// "separable kernels"). kernels.NewSeparable chains one pass per kernel
// axis, last axis first, through ACC_T temporaries, as the CPU engine does.
//
// The pass sees its input as [lines][N_IN][inner] and writes
// [lines][N_OUT][inner], each output element at out[index*stride + offset]
// so that the last pass interleaves a bank's outputs (out[voxel*BANK + b]).
//
//   out[l][i][c] = Σ_j w[j] · x̃[l][i + j − SHIFT][c]
//
// Nonzero taps are added in order, one fused multiply-add each, which is
// what the CPU engine computes: the two give the same bits.
//
// Defines: IN_T, OUT_T, ACC_T (ACC_DOUBLE), OUT_INTEGER, OUT_MIN, OUT_MAX,
// BORDER, K (taps), SHIFT.

__kernel void correlate_pass(
	__global const IN_T* restrict in,
	__global OUT_T* restrict out,
	__constant ACC_T* restrict taps,
	__constant int* restrict unused, // keeps the argument order of every family
	const long n_in, const long n_out, const long inner, const long total,
	const long stride, const long offset,
	const ACC_T cval) // the value outside this pass's input (constant border)
{
	const long step = (long)get_local_size(0) * get_num_groups(0);
	for (long index = get_global_id(0); index < total; index += step) {
		const long c = index % inner;
		const long rest = index / inner;
		const long i = rest % n_out, line = rest / n_out;
		__global const IN_T* src = in + line * n_in * inner + c;
		ACC_T acc = (ACC_T)0;
		for (int j = 0; j < K; j++) {
			const ACC_T w = taps[j];
			if (w == (ACC_T)0) {
				continue;
			}
			const long p = i + j - SHIFT;
#if BORDER == BORDER_CONSTANT
			const ACC_T v = inside(p, n_in) ? to_acc(src[p * inner]) : cval;
#else
			const ACC_T v = to_acc(src[border_index(p, n_in) * inner]);
#endif
			acc = fma_rn(w, v, acc);
		}
		out[index * stride + offset] = to_output(acc);
	}
}
