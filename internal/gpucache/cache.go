package gpucache

import (
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
)

// Cache is one device's artifacts (T: *cuda.Module, *opencl.Program) by
// key, with the counters tests and benchmarks read. The zero Cache is
// empty and ready.
type Cache[T comparable] struct {
	mu      sync.Mutex
	entries map[Key]*entry[T]
	stats   struct{ memoryHits, diskHits, builds, diskWrites, rejected, diskErrors atomic.Int64 }
}

// entry is an artifact being built (ready open) or built.
type entry[T comparable] struct {
	ready chan struct{}
	val   T
	err   error
}

// Stats counts a cache's traffic. The backends export it under their own
// names (CUDA's Builds are Compiles).
type Stats struct {
	MemoryHits int64 // Get calls answered by an artifact already built (or being built)
	DiskHits   int64 // answered by a payload from the Store
	Builds     int64 // calls of build
	DiskWrites int64 // payloads written to the Store
	Rejected   int64 // cache files ignored: damaged, or refused by load
	DiskErrors int64 // the Store's directory could not be used (building still worked)
}

// Stats returns the cache's counters.
func (c *Cache[T]) Stats() Stats {
	s := &c.stats
	return Stats{s.memoryHits.Load(), s.diskHits.Load(), s.builds.Load(), s.diskWrites.Load(), s.rejected.Load(), s.diskErrors.Load()}
}

// Get returns the artifact for key, making it at most once however many
// goroutines ask at the same time: with load from the payload store holds
// for key where there is a good one, else with build, which also returns
// the payload to store (none, nil or empty, where the implementation gives
// none: the artifact is then not cached on disk). A failed build is not
// remembered: the next call tries again.
func (c *Cache[T]) Get(store *Store, key Key, build func() (T, []byte, error), load func([]byte) (T, error)) (T, error) {
	c.mu.Lock()
	if e := c.entries[key]; e != nil {
		c.mu.Unlock()
		<-e.ready
		if e.err == nil {
			c.stats.memoryHits.Add(1)
		}
		return e.val, e.err
	}
	e := &entry[T]{ready: make(chan struct{})}
	if c.entries == nil {
		c.entries = map[Key]*entry[T]{}
	}
	c.entries[key] = e
	c.mu.Unlock()

	e.val, e.err = c.produce(store, key, build, load)
	if e.err != nil {
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
	}
	close(e.ready)
	return e.val, e.err
}

// produce loads the payload for key from store, or builds the artifact and
// stores its payload there. A cache file that fails its checksum, or that
// load refuses, counts as rejected and is replaced. A directory that
// cannot be used costs only the caching.
func (c *Cache[T]) produce(store *Store, key Key, build func() (T, []byte, error), load func([]byte) (T, error)) (T, error) {
	dir, dirErr := store.Dir()
	if dirErr == nil {
		payload, err := store.Read(dir, key)
		switch {
		case err == nil:
			if v, err := load(payload); err == nil {
				c.stats.diskHits.Add(1)
				return v, nil
			}
			c.stats.rejected.Add(1)
		case !errors.Is(err, fs.ErrNotExist):
			c.stats.rejected.Add(1)
		}
	} else {
		c.stats.diskErrors.Add(1)
	}

	c.stats.builds.Add(1)
	v, payload, err := build()
	if err != nil {
		var zero T
		return zero, err
	}
	if dirErr == nil && len(payload) > 0 {
		if err := store.Write(dir, key, payload); err != nil {
			c.stats.diskErrors.Add(1)
		} else {
			c.stats.diskWrites.Add(1)
		}
	}
	return v, nil
}

// Drain empties the cache and returns its artifacts for the caller to
// release (a device's last Close does).
func (c *Cache[T]) Drain() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	var vals []T
	var zero T
	for _, e := range c.entries {
		select {
		case <-e.ready:
			if e.val != zero {
				vals = append(vals, e.val)
			}
		default: // still building: Close waited for the operations in flight, so none is
		}
	}
	c.entries = nil
	return vals
}

// Has reports whether key's artifact is built or being built in c, or
// stored in store: a Get for it would then not build. A nil c has nothing
// in memory (no device open).
func (c *Cache[T]) Has(store *Store, key Key) bool {
	if c == nil {
		return store.Has(key)
	}
	c.mu.Lock()
	_, ok := c.entries[key]
	c.mu.Unlock()
	return ok || store.Has(key)
}

// Missing counts the distinct keys that c (nil: none in memory) and store
// both lack: the builds Gets for them all would make. A planner asks it
// before choosing a device.
func (c *Cache[T]) Missing(store *Store, keys []Key) int {
	seen := map[Key]bool{}
	n := 0
	for _, k := range keys {
		if !seen[k] && !c.Has(store, k) {
			n++
		}
		seen[k] = true
	}
	return n
}
