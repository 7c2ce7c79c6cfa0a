package gpu

import "sync"

// Registry holds a process's one open device D per key K (a CUDA ordinal,
// an OpenCL platform and device) with the count of Opens not yet Closed.
// The zero Registry is empty and ready.
type Registry[K comparable, D comparable] struct {
	mu   sync.Mutex
	open map[K]*registered[D]
}

type registered[D comparable] struct {
	dev  D
	refs int
}

// Open returns the device open under key with one more reference, or the
// one create makes. create runs with the registry locked, so that
// concurrent Opens of one key make one device.
func (r *Registry[K, D]) Open(key K, create func() (D, error)) (D, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.open[key]; e != nil {
		e.refs++
		return e.dev, nil
	}
	d, err := create()
	if err != nil {
		var zero D
		return zero, err
	}
	if r.open == nil {
		r.open = map[K]*registered[D]{}
	}
	r.open[key] = &registered[D]{dev: d, refs: 1}
	return d, nil
}

// Close balances one Open of dev under key; the last one runs release
// with the registry locked. Closing more often than opening does nothing,
// as does closing a device other than the one open under key.
func (r *Registry[K, D]) Close(key K, dev D, release func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.open[key]
	if e == nil || e.dev != dev {
		return nil
	}
	e.refs--
	if e.refs > 0 {
		return nil
	}
	delete(r.open, key)
	return release()
}

// Lookup returns the device open under key, if any, without taking a
// reference: not for use.
func (r *Registry[K, D]) Lookup(key K) (D, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.open[key]; e != nil {
		return e.dev, true
	}
	var zero D
	return zero, false
}

// Life guards a device against its last Close while operations run on it:
// operations share it (Do), the last Close holds it alone (End); after
// End, Do refuses. The zero Life is open.
type Life struct {
	mu     sync.RWMutex
	closed bool
}

// Do runs fn while the device is open, else returns closed. fn must not
// call Do again: the shared lock would deadlock against a pending End.
func (l *Life) Do(closed error, fn func() error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return closed
	}
	return fn()
}

// End waits for the operations in flight, then closes and runs release.
func (l *Life) End(release func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return release()
}

// DoValue runs fn through do (a binding's Device.do: with the device open)
// and returns its value: a handle, a pointer.
func DoValue[T any](do func(func() error) error, fn func() (T, error)) (T, error) {
	var v T
	err := do(func() (err error) {
		v, err = fn()
		return err
	})
	return v, err
}
