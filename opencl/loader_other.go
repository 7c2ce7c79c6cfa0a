//go:build !((linux || darwin || freebsd || netbsd) && !android)

package opencl

import "errors"

// dynamicLoading is false where purego cannot dlopen: the backend is then
// simply unavailable.
const dynamicLoading = false

var errNoDlopen = errors.New("run-time loading is not supported on this system")

func dlopen(string) (uintptr, error)         { return 0, errNoDlopen }
func dlsym(uintptr, string) (uintptr, error) { return 0, errNoDlopen }

// ccall is never reached: no library opens, so no entry point is bound.
func ccall(uintptr, ...uintptr) uintptr { return notLoadedResult }
