// portability.h: the OpenCL C the kernels are written in, mapped onto CUDA
// when NVRTC compiles them (CLBlast's approach). OpenCL compilers see the
// kernels as they are; only the few helpers at the end are shared.
//
// Generated kernels never use OpenCL features this header does not map.
#ifdef __CUDACC__

#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define __private
// __constant qualifies pointer arguments only; CUDA reads them through the
// read-only data cache.
#define __constant const
#define restrict __restrict__
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define barrier(flags) __syncthreads()
// LOCAL_PTR qualifies a pointer into local memory (__local on a
// declaration means __shared__ in CUDA, where such pointers are plain).
#define LOCAL_PTR
#define INLINE __device__ __forceinline__
#define MAKE_FLOAT2(x, y) make_float2((x), (y))

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

INLINE size_t get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
INLINE size_t get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
INLINE size_t get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
INLINE size_t get_num_groups(int d) { return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z; }
INLINE size_t get_global_id(int d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }

// fma_rn is the correctly rounded fused multiply-add a·b + c, never a
// contracted or approximate one: every backend and the CPU engine add each
// tap as acc = fma_rn(w, x, acc) in the same order, so all give the same
// bits.
INLINE float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }

// OpenCL's reinterpretations of a float's bits.
INLINE float as_float(int x) { return __int_as_float(x); }
INLINE int as_int(float x) { return __float_as_int(x); }
INLINE double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }

// prefetch_l2 asks for the line holding p in the L2 cache, holding no
// register until the later load: loads in flight beyond what registers and
// occupancy allow (rows.cl's L2_AHEAD).
INLINE void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

#else // OpenCL C

#define INLINE inline
#define LOCAL_PTR __local
#define MAKE_FLOAT2(x, y) ((float2)((x), (y)))
#ifdef ACC_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
// No contraction of other a·b + c into an FMA: the only fused operations
// are the explicit fma_rn (OpenCL's fma is correctly rounded; mad is not).
#pragma OPENCL FP_CONTRACT OFF
#define fma_rn(a, b, c) fma(a, b, c)
// OpenCL's prefetch: a hint an implementation may ignore.
#define prefetch_l2(p) prefetch((p), 1)

#endif
