//go:build unix

package zarr

import (
	"errors"
	"syscall"
)

// processRuns reports whether process pid of this host runs (or may: a
// process of another user is one).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
