package nd

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// PanicError is a panic recovered in ndconv's own code: a bug, returned as
// an error so that it reaches the caller. A panic on a worker goroutine
// cannot be recovered by the caller and would end the process, taking a
// command's clean-up (its temporary files) or a host program (the C API's)
// with it.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack, for a bug report
}

func (e *PanicError) Error() string { return fmt.Sprintf("internal error: panic: %v", e.Value) }

// RecoverPanic, deferred, turns a panic of its function into a *PanicError
// in *err (where *err is nil or not).
func RecoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Value: r, Stack: debug.Stack()}
	}
}

// ForEach calls fn(worker, item) for every item in [0, n) on up to workers
// goroutines (on the caller's alone where workers ≤ 1), worker being a
// dense index for per-worker scratch, and waits for them. It stops handing
// out items once stop (when not nil) returns true or an item panics. A
// panic is recovered on the goroutine it happens on and the first one is
// returned as a *PanicError once every worker has stopped.
func ForEach(workers, n int, stop func() bool, fn func(worker, item int)) error {
	workers = max(1, min(workers, n))
	var next atomic.Int64
	var panicked atomic.Pointer[PanicError]
	run := func(w int) {
		defer func() {
			if r := recover(); r != nil {
				panicked.CompareAndSwap(nil, &PanicError{Value: r, Stack: debug.Stack()})
			}
		}()
		for panicked.Load() == nil && (stop == nil || !stop()) {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(w, i)
		}
	}
	if workers == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { run(w) })
		}
		wg.Wait()
	}
	if p := panicked.Load(); p != nil {
		return p
	}
	return nil
}
