// cuda_stub.h: just enough of CUDA's built-ins for g++ to check the syntax
// and types of the kernels as portability.h maps them onto CUDA
// (TestCUDASyntax); not a device compiler — NVRTC on a GPU host is.
#include <cstddef>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__
#define __launch_bounds__(...)
struct dim3_ { unsigned x, y, z; };
extern dim3_ threadIdx, blockIdx, blockDim, gridDim;
void __syncthreads();
float __fmaf_rn(float, float, float);
double __fma_rn(double, double, double);
float __int_as_float(int);
int __float_as_int(float);
struct float2 { float x, y; };
float2 make_float2(float, float);
struct uchar4 { unsigned char x, y, z, w; };
struct ushort4 { unsigned short x, y, z, w; };
struct float4 { float x, y, z, w; };
struct double4 { double x, y, z, w; };
struct char4 { signed char x, y, z, w; };
struct short4 { short x, y, z, w; };
struct int4 { int x, y, z, w; };
template <class T> T min(T a, T b) { return a < b ? a : b; }
template <class T> T max(T a, T b) { return a > b ? a : b; }
#include <cmath>
using std::fmin; using std::fmax; using std::rint; using std::floor; using std::trunc;
