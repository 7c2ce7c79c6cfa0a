package gpu

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"
	"weak"
)

// Registered host memory. A Registrar page-locks memory the caller
// allocated (cuMemHostRegister), so that the pipeline copies it directly
// at the pinned rate instead of through staging. Pinning costs time and
// holds memory the OS can no longer move, so a device keeps a bounded
// cache of registrations (HostRegs) that its engines share. Why copies
// through it stay correct:
//
//   - Only Go heap memory (goHeap) is registered, and only the second time
//     the same object is executed (a weak pointer tells it from a new
//     object at a recycled address): pinning costs about what staging
//     does, before the first copy instead of overlapped, so only later
//     executions gain.
//   - A registration holds the arrays whose pages it covers (keep). Were
//     one freed, the runtime could place another object at the same
//     addresses on fresh pages, and copies by those addresses (the driver
//     looks its pinned pages up by address) would move stale bytes; a GC
//     cleanup would run too late. While the arrays live, any array inside
//     a registered range lies on the locked pages.
//   - Memory outside the Go heap (C memory, numpy arrays, mapped files) is
//     never registered: nothing here can keep it mapped.
//   - The driver refuses overlapping registrations, so a range overlapping
//     registered ones is registered as their union, and acquire registers
//     all of an execution's arrays before it holds any.
//   - Copies are asynchronous: an execution holds its registrations
//     (inUse) and keeps the arrays alive until its queues are done.
//   - A failure to register leaves the array on the staging path, never an
//     error to the caller.

const (
	// hostRegMinBytes is the smallest array offered for registration:
	// below it, a registration costs more driver calls than it saves.
	hostRegMinBytes = 1 << 20
	// hostRegLimit bounds the bytes a device keeps registered (and so
	// alive); registering more evicts the least recently used.
	hostRegLimit = 2 << 30
	// maxSightings is how many arrays seen once a device remembers.
	maxSightings = 16
)

// PageLocker page-locks host memory for a device's copies
// (cuMemHostRegister), or fakes it in tests.
type PageLocker interface {
	LockPages(addr uintptr, n int) error
	UnlockPages(addr uintptr) error
}

// Registrar is a Device that can page-lock its caller's memory; its
// engines share its HostRegs.
type Registrar interface {
	HostRegs() *HostRegs
}

// HostRegs is a device's cache of registered, disjoint page ranges.
type HostRegs struct {
	locker PageLocker
	limit  int64   // bytes registered at most
	page   uintptr // the OS page size, a power of two

	mu        sync.Mutex
	entries   []*hostReg // least recently used first
	bytes     int64
	sightings []sighting // newest last
	failed    error      // the last registration refused, for tests and debugging
}

// hostReg is one registered range, [lo, hi), page-aligned.
type hostReg struct {
	lo, hi uintptr
	keep   []any            // the arrays whose pages these are, held alive
	owners map[any]struct{} // the engines that used it, until they close
	inUse  int              // executions with copies from or to it in flight
}

func (r *hostReg) size() int64 { return int64(r.hi - r.lo) }

// sighting is an array executed once, not registered.
type sighting struct {
	lo, hi  uintptr
	obj     weak.Pointer[byte]
	refused bool // registering it failed: not tried again while it lives
}

// NewHostRegs is an empty cache registering through locker.
func NewHostRegs(locker PageLocker) *HostRegs {
	return &HostRegs{locker: locker, limit: hostRegLimit, page: uintptr(os.Getpagesize())}
}

// hostArray is an array offered to acquire: its data (held alive) and its
// bytes (none: not offered).
type hostArray struct {
	data any
	b    []byte
}

// acquire returns the registrations covering arrays for owner's
// execution (nil: staging), registering those seen for the second time;
// they are held until release.
func (h *HostRegs) acquire(owner any, arrays ...hostArray) []*hostReg {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Registering one array may merge another's idle registration.
	for _, a := range arrays {
		if len(a.b) > 0 {
			h.registerOnReuse(a)
		}
	}
	regs := make([]*hostReg, len(arrays))
	for i, a := range arrays {
		if len(a.b) == 0 {
			continue
		}
		if r := h.find(byteRange(a.b)); r != nil {
			// r becomes the most recently used.
			h.entries = append(slices.DeleteFunc(h.entries, func(e *hostReg) bool { return e == r }), r)
			r.inUse++
			r.owners[owner] = struct{}{}
			regs[i] = r
		}
	}
	return regs
}

// registerOnReuse registers a on its second sighting.
func (h *HostRegs) registerOnReuse(a hostArray) {
	lo, hi := byteRange(a.b)
	if h.find(lo, hi) != nil {
		return
	}
	s := h.sighting(unsafe.Pointer(&a.b[0]), lo, hi)
	if s == nil || s.refused {
		return
	}
	if r, retry := h.register(lo, hi, a.data); r == nil {
		s.refused = !retry
		return
	}
	h.sightings = slices.DeleteFunc(h.sightings, func(t sighting) bool { return t.lo == lo && t.hi == hi })
}

// byteRange is the addresses of b, not empty: [lo, hi).
func byteRange(b []byte) (lo, hi uintptr) {
	lo = uintptr(unsafe.Pointer(&b[0]))
	return lo, lo + uintptr(len(b))
}

// release ends an execution's use of acquire's registrations, once
// nothing is in flight from or to them.
func (h *HostRegs) release(rs ...*hostReg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range rs {
		if r != nil {
			r.inUse--
		}
	}
}

// find returns the registration containing [lo, hi), or nil.
func (h *HostRegs) find(lo, hi uintptr) *hostReg {
	for _, r := range h.entries {
		if r.lo <= lo && hi <= r.hi {
			return r
		}
	}
	return nil
}

// sighting returns the earlier sighting of the live object at [lo, hi),
// else records this one (Go heap memory only) and returns nil.
func (h *HostRegs) sighting(first unsafe.Pointer, lo, hi uintptr) *sighting {
	for i := range h.sightings {
		s := &h.sightings[i]
		if s.lo == lo && s.hi == hi {
			if s.obj.Value() != nil { // the same object: two live objects never share an address
				return s
			}
			h.sightings = slices.Delete(h.sightings, i, i+1) // another object, since freed
			break
		}
	}
	if !goHeap(first) {
		return nil
	}
	if len(h.sightings) == maxSightings {
		h.sightings = slices.Delete(h.sightings, 0, 1)
	}
	h.sightings = append(h.sightings, sighting{lo: lo, hi: hi, obj: weak.Make((*byte)(first))})
	return nil
}

// register page-locks the pages of [lo, hi) merged with the ones they
// overlap, evicting the least recently used idle ones to stay within the
// limit. On failure it returns nil and whether a later try may succeed.
func (h *HostRegs) register(lo, hi uintptr, data any) (r *hostReg, retry bool) {
	r = &hostReg{lo: lo &^ (h.page - 1), hi: (hi + h.page - 1) &^ (h.page - 1), keep: []any{data}, owners: map[any]struct{}{}}
	var merged []*hostReg
	for grown := true; grown; {
		grown = false
		for _, e := range h.entries {
			if e.lo < r.hi && r.lo < e.hi && !slices.Contains(merged, e) {
				if e.inUse > 0 {
					return nil, true
				}
				merged = append(merged, e)
				r.lo, r.hi, grown = min(r.lo, e.lo), max(r.hi, e.hi), true
			}
		}
	}
	need := r.size()
	for _, e := range merged {
		need -= e.size()
	}
	if r.size() > h.limit {
		return nil, false
	}
	for h.bytes+need > h.limit {
		i := slices.IndexFunc(h.entries, func(e *hostReg) bool { return e.inUse == 0 && !slices.Contains(merged, e) })
		if i < 0 {
			return nil, true
		}
		h.drop(h.entries[i])
	}
	for _, e := range merged {
		h.drop(e)
		r.keep = append(r.keep, e.keep...)
		for o := range e.owners {
			r.owners[o] = struct{}{}
		}
	}
	if err := h.locker.LockPages(r.lo, int(r.size())); err != nil {
		h.failed = err
		return nil, false
	}
	h.entries = append(h.entries, r)
	h.bytes += r.size()
	return r, false
}

// drop unregisters r and forgets it. An error leaves the pages locked
// until the context goes; nothing copies through r again.
func (h *HostRegs) drop(r *hostReg) error {
	h.entries = slices.DeleteFunc(h.entries, func(e *hostReg) bool { return e == r })
	h.bytes -= r.size()
	return h.locker.UnlockPages(r.lo)
}

// close forgets owner (a closing engine), unregistering what no other
// engine has used.
func (h *HostRegs) close(owner any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, r := range slices.Clone(h.entries) {
		delete(r.owners, owner)
		if len(r.owners) == 0 && r.inUse == 0 {
			errs = append(errs, h.drop(r))
		}
	}
	return errors.Join(errs...)
}

// Drain forgets every registration and returns their addresses, for the
// device's last Close to unregister.
func (h *HostRegs) Drain() []uintptr {
	h.mu.Lock()
	defer h.mu.Unlock()
	var addrs []uintptr
	for _, r := range h.entries {
		addrs = append(addrs, r.lo)
	}
	h.entries, h.bytes, h.sightings = nil, 0, nil
	return addrs
}

// goHeap reports whether p points into an object of the Go heap:
// runtime.AddCleanup panics where there is none (C memory, a mapped file,
// a stack) and returns the zero Cleanup for the linker's memory.
func goHeap(p unsafe.Pointer) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	c := runtime.AddCleanup((*byte)(p), func(int) {}, 0)
	c.Stop()
	return c != runtime.Cleanup{}
}
