//go:build unix

package simd

import (
	"syscall"
	"time"
)

// processCPU is the CPU time of this process so far, every thread's user
// and system time: on a shared machine, where wall time depends on the
// other load, it is the steadier measure of an engine's work.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
