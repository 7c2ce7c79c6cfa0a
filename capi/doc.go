// Command capi is ndconv's C API, built as a shared library for the Python
// package (python/ndconv) and any other C caller:
//
//	go build -buildmode=c-shared -o libndconv.so ./capi
//
// It exports eleven functions. ndconv_plan_new prepares a correlation or
// convolution (or a named filter) from a JSON description and float64
// weights (complex ones as pairs of float64, numpy's complex128 memory) and
// returns a handle; ndconv_plan_info describes the plan's output
// as JSON; ndconv_plan_execute filters one C-contiguous buffer into another
// (no copies: the Go engines read and write the caller's memory for the
// length of the call, except that an output overlapping the input is
// computed into a temporary and copied, as scipy.ndimage does, and that a
// named filter of several terms, such as a gradient magnitude, combines
// them in an array of its own, which is copied);
// ndconv_plan_free releases the plan and its device resources;
// ndconv_plan_execute_device filters the caller's CUDA device memory in
// place (a plan whose request asks for "device_arrays" on cuda:N; the
// addresses, byte counts and the caller's stream handle as integers: 0 the
// legacy default stream, -1 none to wait for). With a stream the work is
// ordered on it as a CUDA library call's: after what the caller queued
// there, before what it queues next, and the call may return before the
// result is written; with -1 it returns once the result is written. A plan
// keeps its device (a GPU context) alive across calls and may be used from
// several threads: calls on one plan are serialised.
//
// Six more open Zarr arrays through the zarr package, for writers in other
// processes (python/ndconv/dask.py's to_zarr): ndconv_zarr_create writes
// a new array's metadata from a JSON description (url, shape, dtype,
// chunks, shards, format, compressor, level, fill_value, resume; as
// imageio.CreateZarr) and returns a handle; ndconv_zarr_open opens the
// array at a URL; ndconv_zarr_info describes it as JSON (shape, dtype,
// chunks, shards: the unit stored under one key, format);
// ndconv_zarr_write_region writes a C-contiguous buffer at a start on the
// shard grid (zarr.Array.WriteRegion: each shard whole, in one Put, so a
// region written again writes the same bytes); ndconv_zarr_read_region
// reads any box; ndconv_zarr_close forgets the handle. Starts and shapes
// are arrays of rank int64s.
//
// JSON has no NaN or infinity: a request carries a non-finite cval as the
// string "nan", "inf" or "-inf". A request's unknown fields are refused.
//
// Every function returns 0 or an error code (1: the request or an argument
// is invalid or unsupported, a ValueError in Python; 2: anything else, such
// as an unavailable device, an unknown or freed handle, or an internal
// error) with the one-line message the CLI prints, written NUL-terminated
// into the caller's error buffer (where it is not NULL). Every argument is
// checked before memory is touched through it: a NULL pointer with a
// nonzero length, a negative count or length, a length that does not match
// the plan's shape and dtype, an unknown handle and a second free are
// errors. A panic inside an entry point is recovered and returned as code 2
// with "internal error" in its message: it is a bug, but it does not take
// the caller's process with it. (A panic on one of the engines' worker
// goroutines cannot be recovered here; the engines must not panic.)
//
// The cgo wrappers (capi.go) only convert types; the logic, its checks and
// the request decoder are plain Go (api.go, request.go), tested without
// cgo. This package is imported by nothing: the CLI and library stay
// CGO_ENABLED=0.
package main
