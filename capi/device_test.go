package main

import (
	"os"
	"testing"

	"github.com/ndconv/ndconv/cuda"
)

// The device-array entry point's checks, which come before any device is
// touched, so that they run on a machine with no GPU too.

func TestPlanExecuteDeviceArguments(t *testing.T) {
	host := mustPlan(t, spec1D, []float64{1, 2, 3})
	const n = 8 * 8 // the plan's 8 float64
	cases := []struct {
		name     string
		id       int64
		src      uintptr
		srcBytes int64
		dst      uintptr
		dstBytes int64
		stream   int64
		code     int32
		want     string
	}{
		{"negative bytes", host, 0x1000, -1, 0x2000, n, 0, 1, "invalid device array: a negative byte count"},
		{"NULL input", host, 0, n, 0x2000, n, 0, 1, "invalid input: NULL device pointer with 64 bytes"},
		{"NULL output", host, 0x1000, n, 0, n, 0, 1, "invalid output: NULL device pointer with 64 bytes"},
		{"bad stream", host, 0x1000, n, 0x2000, n, -2, 1, "invalid stream: -2 is neither"},
		{"in place", host, 0x1000, n, 0x1000, n, 0, 1, "invalid output: shares device memory with the input"},
		{"overlapping", host, 0x1000, n, 0x1008, n, 0, 1, "invalid output: shares device memory with the input"},
		{"host plan", host, 0x1000, n, 0x2000, n, 0, 1, "was made for host arrays"},
		{"no plan", 1 << 40, 0x1000, n, 0x2000, n, 0, 2, "no plan"},
	}
	for _, c := range cases {
		var e errBuf
		rc := planExecuteDevice(c.id, c.src, c.srcBytes, c.dst, c.dstBytes, c.stream, e.ptr(), e.len())
		wantErr(t, c.name, rc, &e, c.code, c.want)
	}
}

func TestDeviceArraysRequest(t *testing.T) {
	var id int64
	cases := []struct{ name, spec, want string }{
		{"cpu", `{"op":"correlate","shape":[8],"dtype":"float32","border":"reflect","kernel_shape":[3],"nkernels":1,"device":"cpu","device_arrays":true}`,
			`unsupported device for device arrays "cpu" (supported: cuda, cuda:N)`},
		{"opencl", `{"op":"correlate","shape":[8],"dtype":"float32","border":"reflect","kernel_shape":[3],"nkernels":1,"device":"opencl","device_arrays":true}`,
			`unsupported device for device arrays "opencl"`},
		{"auto", `{"op":"correlate","shape":[8],"dtype":"float32","border":"reflect","kernel_shape":[3],"nkernels":1,"device":"auto","device_arrays":true}`,
			`unsupported device for device arrays "auto"`},
	}
	for _, c := range cases {
		var e errBuf
		rc := planNew(cstr(c.spec), f64ptr([]float64{1, 2, 3}), 3, &id, e.ptr(), e.len())
		wantErr(t, c.name, rc, &e, 1, c.want)
	}
	var e errBuf
	rc := planNew(cstr(`{"op":"correlate","shape":[8,8],"dtype":"float32","border":"reflect","filter":"log:sigma=1","device":"cuda","device_arrays":true}`), nil, 0, &id, e.ptr(), e.len())
	wantErr(t, "filter", rc, &e, 1, "unsupported named filter of several terms on device arrays")
}

// TestDeviceArraysNoGPU: on a machine without CUDA, a plan for device
// arrays is an unavailable device (code 2), not a crash.
func TestDeviceArraysNoGPU(t *testing.T) {
	if cuda.Available() == nil {
		t.Skip("CUDA is available: the device tests (python/tests/gpu_arrays_device.py) cover it")
	}
	if os.Getenv("NDCONV_LIBCUDA") != "" {
		t.Skip("NDCONV_LIBCUDA set")
	}
	var id int64
	var e errBuf
	rc := planNew(cstr(`{"op":"correlate","shape":[8],"dtype":"float32","border":"reflect","kernel_shape":[3],"nkernels":1,"device":"cuda:0","device_arrays":true}`), f64ptr([]float64{1, 2, 3}), 3, &id, e.ptr(), e.len())
	if rc != 2 {
		t.Errorf("planNew on a machine with no CUDA = %d %q, want 2", rc, e.String())
	}
	// A named filter of one kernel on device arrays asks for the device
	// too (the Gaussian's plan on it).
	rc = planNew(cstr(`{"op":"correlate","shape":[8,8],"dtype":"float32","border":"reflect","filter":"gaussian:sigma=1","device":"cuda:0","device_arrays":true}`), nil, 0, &id, e.ptr(), e.len())
	if rc != 2 {
		t.Errorf("planNew of a Gaussian on device arrays with no CUDA = %d %q, want 2", rc, e.String())
	}
}
