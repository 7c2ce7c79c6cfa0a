package main

import "sync"

// idTable hands out the int64 handles the C API names its objects by
// (plans, Zarr arrays), from 1 up, never reused, safe for concurrent
// callers.
type idTable[T any] struct {
	mu   sync.Mutex
	m    map[int64]T
	next int64
}

// add keeps v and returns its new id.
func (t *idTable[T]) add(v T) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int64]T{}
	}
	t.next++
	t.m[t.next] = v
	return t.next
}

// get returns the object id names.
func (t *idTable[T]) get(id int64) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[id]
	return v, ok
}

// take forgets id and returns what it named.
func (t *idTable[T]) take(id int64) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[id]
	delete(t.m, id)
	return v, ok
}
