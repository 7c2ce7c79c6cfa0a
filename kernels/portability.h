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
#define INLINE __device__ __forceinline__

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

INLINE size_t get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
INLINE size_t get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
INLINE size_t get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
INLINE size_t get_num_groups(int d) { return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z; }
INLINE size_t get_global_id(int d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }

// mul_rn and add_rn round each product and sum on its own: the compiler may
// not fuse them into an FMA, so that every backend and the CPU engine, which
// add w·x to the accumulator in the same order, give the same bits.
INLINE float mul_rn(float a, float b) { return __fmul_rn(a, b); }
INLINE double mul_rn(double a, double b) { return __dmul_rn(a, b); }
INLINE float add_rn(float a, float b) { return __fadd_rn(a, b); }
INLINE double add_rn(double a, double b) { return __dadd_rn(a, b); }

#else // OpenCL C

#define INLINE inline
#ifdef ACC_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
// No contraction of a·b + c into an FMA anywhere (see mul_rn on the CUDA
// side): every product and sum is rounded on its own.
#pragma OPENCL FP_CONTRACT OFF
#define mul_rn(a, b) ((a) * (b))
#define add_rn(a, b) ((a) + (b))

#endif
