// roofline.cl: the two kernels that measure a device's limits for the
// bench's roofline — memory bandwidth (a copy) and FP32 throughput (FMA
// chains). They need none of common.cl's defines.

// copy_floats copies n float4 values; a device-to-device copy moves each
// byte twice (read and write), which is how the bench counts its bandwidth.
__kernel void copy_floats(__global const float4* restrict in, __global float4* restrict out, const long n)
{
	const long step = (long)get_local_size(0) * get_num_groups(0);
	for (long i = get_global_id(0); i < n; i += step) {
		out[i] = in[i];
	}
}

// fma_chains runs CHAINS independent FMA chains of iterations steps per
// work-item (enough independent work to hide the FMA latency) and stores
// their sum, so the compiler cannot drop them: 2·CHAINS·iterations FLOPs.
#define CHAINS 8
__kernel void fma_chains(__global float* restrict out, const int iterations)
{
	const float m = 0.9999f, c = 0.0001f;
	float a[CHAINS];
	for (int k = 0; k < CHAINS; k++) {
		a[k] = (float)get_global_id(0) * 1e-9f + (float)k;
	}
	for (int i = 0; i < iterations; i++) {
		for (int k = 0; k < CHAINS; k++) {
			a[k] = fma(a[k], m, c);
		}
	}
	float sum = 0.0f;
	for (int k = 0; k < CHAINS; k++) {
		sum += a[k];
	}
	out[get_global_id(0)] = sum;
}
