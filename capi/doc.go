//go:build cgo

// Command capi is ndconv's C API, built as a shared library for the Python
// package (python/ndconv) and any other C caller:
//
//	go build -buildmode=c-shared -o libndconv.so ./capi
//
// It exports four functions. ndconv_plan_new prepares a correlation or
// convolution (or a named filter) from a JSON description and float64
// weights (complex ones as pairs of float64, numpy's complex128 memory) and
// returns a handle; ndconv_plan_info describes the plan's output
// as JSON; ndconv_plan_execute filters one C-contiguous buffer into another
// (no copies: the Go engines read and write the caller's memory for the
// length of the call); ndconv_plan_free releases the plan and its device
// resources. A plan keeps its device (a GPU context) alive across calls and
// may be used from several threads: calls on one plan are serialised.
//
// Errors are returned as a code (1: the request is invalid or unsupported,
// a ValueError in Python; 2: anything else, such as an unavailable device)
// and the one-line message the CLI prints, written NUL-terminated into the
// caller's buffer.
//
// This package needs cgo and is imported by nothing: the CLI and library
// stay CGO_ENABLED=0.
package main
