//go:build unix

package cpu

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far, all threads, user
// and system: on a shared machine it moves far less with other loads than
// wall time does.
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
