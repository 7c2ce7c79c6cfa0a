package jpeg

import (
	"runtime/debug"
	"sync"

	"github.com/ndconv/ndconv/nd"
)

// failure is the first panic among a codec's worker goroutines, recovered
// as an *nd.PanicError, and a channel closed at it, so that the other
// workers and the goroutine joining their rows stop instead of waiting
// for rows that will not come. A panic on a goroutine of its own would
// otherwise end the process — a folder run of thousands of files with it.
type failure struct {
	once sync.Once
	err  *nd.PanicError
	done chan struct{}
}

func newFailure() *failure { return &failure{done: make(chan struct{})} }

// recover, deferred by a worker goroutine, records its panic.
func (f *failure) recover() {
	if r := recover(); r != nil {
		f.once.Do(func() {
			f.err = &nd.PanicError{Value: r, Stack: debug.Stack()}
			close(f.done)
		})
	}
}

// testHookRow, set by tests, runs as a worker takes MCU row i (to panic
// there).
var testHookRow func(i int)
