// common.cl: what every kernel family shares: the border rule and the
// conversion of results into the output type. Both mirror package nd
// (nd.Border.Index, nd.Round), which the tests compare against.

// Border modes, numbered as nd.Border.
#define BORDER_REFLECT 0
#define BORDER_MIRROR 1
#define BORDER_NEAREST 2
#define BORDER_WRAP 3
#define BORDER_CONSTANT 4

INLINE long floor_mod(long a, long m) {
	long r = a % m;
	return r < 0 ? r + m : r;
}

// border_index maps position p of an axis of length n into [0, n) by the
// border rule, at any distance. BORDER_CONSTANT has no mapping: callers
// test inside(p, n) first.
INLINE long border_index(long p, long n) {
	if (p >= 0 && p < n) {
		return p;
	}
#if BORDER == BORDER_REFLECT
	long q = floor_mod(p, 2 * n);
	return q >= n ? 2 * n - 1 - q : q;
#elif BORDER == BORDER_MIRROR
	if (n == 1) {
		return 0;
	}
	long q = floor_mod(p, 2 * n - 2);
	return q >= n ? 2 * n - 2 - q : q;
#elif BORDER == BORDER_NEAREST
	return p < 0 ? 0 : n - 1;
#elif BORDER == BORDER_WRAP
	return floor_mod(p, n);
#else
	return 0;
#endif
}

// accumulate adds w·v to acc with one correctly rounded fused
// multiply-add, skipping zero weights as scipy does (its footprint leaves
// them out), so that a NaN or Inf under a zero tap does not reach the
// output. Every engine adds the nonzero taps in the kernel's row-major
// order this way, so all give the same bits.
INLINE ACC_T accumulate(ACC_T acc, ACC_T w, ACC_T v) {
	return w != (ACC_T)0 ? fma_rn(w, v, acc) : acc;
}

INLINE int inside(long p, long n) { return p >= 0 && p < n; }

// to_output converts an accumulated value to OUT_T as nd.Round does:
// integers round half to even and saturate, NaN becoming 0.
INLINE OUT_T to_output(ACC_T v) {
#if OUT_INTEGER
	if (isnan(v)) {
		return (OUT_T)0;
	}
	v = rint(v);
	// Compared, not clamped: OUT_MAX of int32 is not a float32 value.
	if (v <= (ACC_T)OUT_MIN) {
		return (OUT_T)OUT_MIN;
	}
	if (v >= (ACC_T)OUT_MAX) {
		return (OUT_T)OUT_MAX;
	}
	return (OUT_T)v;
#else
	return (OUT_T)v;
#endif
}
