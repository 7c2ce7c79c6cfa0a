package gpu

import "sync"

// Life guards a device against its last Close while operations run on it:
// every operation shares it (Do), and the Close that releases the device
// holds it alone (End), waiting for the operations in flight; after End,
// Do refuses. The zero Life is open.
type Life struct {
	mu     sync.RWMutex
	closed bool
}

// Do runs fn while the device is open, shared with other operations, and
// returns closed without running fn after End. fn must not call Do again
// (directly or through a method): the shared lock it holds would
// deadlock against a pending End.
func (l *Life) Do(closed error, fn func() error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return closed
	}
	return fn()
}

// End waits for the operations in flight, marks the device closed and
// runs release alone, returning its error.
func (l *Life) End(release func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return release()
}
