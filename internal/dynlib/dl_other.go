//go:build !((linux || darwin || freebsd || netbsd) && !android)

package dynlib

import "errors"

// Supported is false where purego cannot dlopen: the backends are then
// simply unavailable.
const Supported = false

var errNoDlopen = errors.New("run-time loading is not supported on this system")

func dlopen(string) (uintptr, error)         { return 0, errNoDlopen }
func dlsym(uintptr, string) (uintptr, error) { return 0, errNoDlopen }

// Call is never given a bound fn: no library opens, so no entry point is
// bound. It returns unbound.
func Call(fn, unbound uintptr, args ...uintptr) uintptr { return unbound }
