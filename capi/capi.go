//go:build cgo

package main

/*
#include <stdint.h>
*/
import "C"

import "unsafe"

// The C functions: each converts its C types and calls its Go twin in
// api.go, which validates every argument and recovers any panic.

//export ndconv_plan_new
func ndconv_plan_new(spec *C.char, weights *C.double, nweights C.int64_t, out *C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(planNew(unsafe.Pointer(spec), unsafe.Pointer(weights), int64(nweights), (*int64)(unsafe.Pointer(out)), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_plan_info
func ndconv_plan_info(id C.int64_t, buf *C.char, n C.int, errbuf *C.char, errlen C.int) C.int {
	return C.int(planInfo(int64(id), unsafe.Pointer(buf), int32(n), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_plan_execute
func ndconv_plan_execute(id C.int64_t, src unsafe.Pointer, srcBytes C.int64_t, dst unsafe.Pointer, dstBytes C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(planExecute(int64(id), src, int64(srcBytes), dst, int64(dstBytes), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_plan_free
func ndconv_plan_free(id C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(planFree(int64(id), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_plan_execute_device
func ndconv_plan_execute_device(id C.int64_t, src C.uint64_t, srcBytes C.int64_t, dst C.uint64_t, dstBytes C.int64_t, stream C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(planExecuteDevice(int64(id), uintptr(src), int64(srcBytes), uintptr(dst), int64(dstBytes), int64(stream), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_zarr_create
func ndconv_zarr_create(spec *C.char, out *C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(zarrCreate(unsafe.Pointer(spec), (*int64)(unsafe.Pointer(out)), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_zarr_open
func ndconv_zarr_open(url *C.char, out *C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(zarrOpen(unsafe.Pointer(url), (*int64)(unsafe.Pointer(out)), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_zarr_info
func ndconv_zarr_info(id C.int64_t, buf *C.char, n C.int, errbuf *C.char, errlen C.int) C.int {
	return C.int(zarrInfoOf(int64(id), unsafe.Pointer(buf), int32(n), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_zarr_write_region
func ndconv_zarr_write_region(id C.int64_t, start, shape *C.int64_t, rank C.int, src unsafe.Pointer, nbytes C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(zarrWriteRegion(int64(id), unsafe.Pointer(start), unsafe.Pointer(shape), int32(rank), src, int64(nbytes), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_zarr_read_region
func ndconv_zarr_read_region(id C.int64_t, start, shape *C.int64_t, rank C.int, dst unsafe.Pointer, nbytes C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(zarrReadRegion(int64(id), unsafe.Pointer(start), unsafe.Pointer(shape), int32(rank), dst, int64(nbytes), unsafe.Pointer(errbuf), int32(errlen)))
}

//export ndconv_zarr_close
func ndconv_zarr_close(id C.int64_t, errbuf *C.char, errlen C.int) C.int {
	return C.int(zarrClose(int64(id), unsafe.Pointer(errbuf), int32(errlen)))
}
