package gpu

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// FreeList keeps freed allocations (device buffers, pinned host memory) by
// size class for the next allocation of that class: the APIs' own are slow
// and synchronising (cuMemFree waits for the device, cuMemHostAlloc locks
// every page). A binding keeps one list per kind of memory per device and
// frees what Put refuses and what Drain returns.
type FreeList[T any] struct {
	limit int64 // idle bytes kept at most

	mu    sync.Mutex
	free  map[int][]T // size class → idle allocations
	idle  int64
	stats FreeListStats
}

// HostFreeLimit bounds the idle pinned staging a device keeps.
const HostFreeLimit = 1 << 30

// FreeListStats counts a FreeList's traffic.
type FreeListStats struct {
	Hits, Misses int64 // Takes served from the list, and not
	IdleBytes    int64 // held now
}

// NewFreeList keeps up to limit idle bytes.
func NewFreeList[T any](limit int64) *FreeList[T] { return &FreeList[T]{limit: limit} }

// SizeClass rounds n up to its class: up to 64 MiB a multiple of an eighth
// of the power of two at or above it (at most 25% more); above, of 2 MiB
// (at most 3% more, so that a budget sized to the buffers holds them).
func SizeClass(n int) int {
	if n <= minSizeClass {
		return minSizeClass
	}
	step := 1 << (bits.Len(uint(n-1)) - 3)
	if n > coarseClassesUpTo {
		step = largeClassStep
	}
	return (n + step - 1) &^ (step - 1)
}

const (
	minSizeClass      = 512 // finer classes would only fragment
	coarseClassesUpTo = 64 << 20
	largeClassStep    = 2 << 20
)

// Get returns an allocation for n bytes and its class: an idle one of n's
// class, else alloc(class)'s.
func (f *FreeList[T]) Get(n int, alloc func(class int) (T, error)) (T, int, error) {
	class := SizeClass(n)
	if t, ok := f.Take(class); ok {
		return t, class, nil
	}
	t, err := alloc(class)
	return t, class, err
}

// Take returns an idle allocation of class, or false (a miss).
func (f *FreeList[T]) Take(class int) (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if list := f.free[class]; len(list) > 0 {
		t := list[len(list)-1]
		f.free[class] = list[:len(list)-1]
		f.idle -= int64(class)
		f.stats.Hits++
		return t, true
	}
	f.stats.Misses++
	var zero T
	return zero, false
}

// Put keeps t, of class bytes, for a later Take; false where the list is
// full, and the caller frees t.
func (f *FreeList[T]) Put(t T, class int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle+int64(class) > f.limit {
		return false
	}
	if f.free == nil {
		f.free = map[int][]T{}
	}
	f.free[class] = append(f.free[class], t)
	f.idle += int64(class)
	return true
}

// Drain empties the list and returns its allocations for the caller to free.
func (f *FreeList[T]) Drain() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []T
	for _, list := range f.free {
		all = append(all, list...)
	}
	f.free, f.idle = nil, 0
	return all
}

// Alloc calls alloc and, where it fails for want of memory (retry), frees
// every idle allocation and calls it once more.
func (f *FreeList[T]) Alloc(alloc func() (T, error), retry func(error) bool, free func(T) error) (T, error) {
	t, err := alloc()
	if err != nil && retry(err) {
		if idle := f.Drain(); len(idle) > 0 {
			for _, u := range idle {
				free(u)
			}
			t, err = alloc()
		}
	}
	return t, err
}

// Pooled is the first n bytes of an allocation of a FreeList's (a
// HostBuffer): Free gives it back to the list or, where the list is full,
// to release. Freeing twice does nothing.
type Pooled[T any] struct {
	list    *FreeList[T]
	t       T
	class   int
	mem     []byte
	release func(T) error
	freed   atomic.Bool
}

// GetPooled returns n bytes of an allocation of n's class: an idle one of
// list's, else alloc's. mem is an allocation's first n bytes.
func GetPooled[T any](list *FreeList[T], n int, alloc func(class int) (T, error), mem func(t T, n int) []byte, release func(T) error) (*Pooled[T], error) {
	t, class, err := list.Get(n, alloc)
	if err != nil {
		return nil, err
	}
	return &Pooled[T]{list: list, t: t, class: class, mem: mem(t, n), release: release}, nil
}

// Bytes is the memory, not to be used after Free (nil then).
func (p *Pooled[T]) Bytes() []byte {
	if p.freed.Load() {
		return nil
	}
	return p.mem
}

func (p *Pooled[T]) Free() error {
	if p.freed.Swap(true) || p.list.Put(p.t, p.class) {
		return nil
	}
	return p.release(p.t)
}

// Stats returns the counters.
func (f *FreeList[T]) Stats() FreeListStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.IdleBytes = f.idle
	return s
}
