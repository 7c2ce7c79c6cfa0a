package gpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// fakeLocker stands in for cuMemHostRegister and cuMemHostUnregister,
// refusing what the driver refuses: unaligned or overlapping ranges, and
// unregistering what is not registered.
type fakeLocker struct {
	page   uintptr
	locked map[uintptr]int // address → bytes
	locks  int             // LockPages calls
	fail   error           // LockPages's answer, where set
}

func newFakeLocker() *fakeLocker {
	return &fakeLocker{page: uintptr(pageSize()), locked: map[uintptr]int{}}
}

func (f *fakeLocker) LockPages(addr uintptr, n int) error {
	f.locks++
	if f.fail != nil {
		return f.fail
	}
	if addr%f.page != 0 || uintptr(n)%f.page != 0 || n == 0 {
		return errors.New("cuMemHostRegister: CUDA_ERROR_INVALID_VALUE")
	}
	for a, m := range f.locked {
		if a < addr+uintptr(n) && addr < a+uintptr(m) {
			return errors.New("cuMemHostRegister: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED")
		}
	}
	f.locked[addr] = n
	return nil
}

func (f *fakeLocker) UnlockPages(addr uintptr) error {
	if _, ok := f.locked[addr]; !ok {
		return errors.New("cuMemHostUnregister: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED")
	}
	delete(f.locked, addr)
	return nil
}

// covers reports whether one locked range holds all of b.
func (f *fakeLocker) covers(b []byte) bool {
	lo := uintptr(unsafe.Pointer(&b[0]))
	for a, m := range f.locked {
		if a <= lo && lo+uintptr(len(b)) <= a+uintptr(m) {
			return true
		}
	}
	return false
}

func pageSize() int { return os.Getpagesize() }

// pages allocates n pages and more, on pages of its own: the Go heap
// gives objects over 32 KiB whole pages.
func pages(n int) []byte { return make([]byte, n*pageSize()) }

// use acquires b for owner and releases it at once, reporting whether it
// was registered.
func use(h *HostRegs, owner any, b []byte) bool {
	r := h.acquire(owner, hostArray{b, b})
	h.release(r...)
	return r[0] != nil
}

// TestHostRegsSecondSight: an array is registered the second time it is
// executed, then served from the cache, with its views.
func TestHostRegsSecondSight(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	a := pages(20)
	b := a[100 : len(a)-7] // unaligned at both ends
	if use(h, 1, b) || f.locks != 0 {
		t.Fatalf("registered at first sight (%d locks)", f.locks)
	}
	if !use(h, 1, b) || f.locks != 1 || !f.covers(b) {
		t.Fatalf("not registered at second sight: %d locks, %v", f.locks, f.locked)
	}
	if !use(h, 1, b) || !use(h, 2, a[5000:9000]) || f.locks != 1 {
		t.Errorf("the array and a view of it: %d locks, want the first only", f.locks)
	}
	if other := pages(20); use(h, 1, other) {
		t.Error("another array registered at first sight")
	}
	runtime.KeepAlive(a)
}

// TestHostRegsLRU: registrations stay within the limit, the least
// recently used idle one evicted first; one in use is never evicted.
func TestHostRegsLRU(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	h.limit = int64(40 * pageSize()) // two arrays of 16 pages
	x, y, z := pages(16), pages(16), pages(16)
	for _, a := range [][]byte{x, x, y, y} {
		use(h, 1, a)
	}
	use(h, 1, x) // y is now the least recently used
	use(h, 1, z)
	if !use(h, 1, z) || !f.covers(x) || !f.covers(z) || f.covers(y) || h.bytes != int64(32*pageSize()) {
		t.Fatalf("after z: x %v y %v z %v, %d bytes", f.covers(x), f.covers(y), f.covers(z), h.bytes)
	}
	// x in use, z idle: y evicts z.
	held := h.acquire(1, hostArray{x, x})
	use(h, 1, y)
	if !use(h, 1, y) || !f.covers(x) || f.covers(z) {
		t.Fatalf("with x in use: x %v y %v z %v", f.covers(x), f.covers(y), f.covers(z))
	}
	// x and y in use: z does not fit now, and does once they are released.
	held2 := h.acquire(1, hostArray{y, y})
	use(h, 1, z)
	if use(h, 1, z) {
		t.Fatal("registered beyond the limit")
	}
	h.release(append(held, held2...)...)
	if !use(h, 1, z) {
		t.Error("not registered once room was made")
	}
	if big := pages(41); use(h, 1, big) || use(h, 1, big) {
		t.Error("an array above the limit was registered")
	}
}

// TestHostRegsOverlap: views of one array that overlap are merged into one
// registration (the driver refuses overlapping ones), not while the one
// in the way is in use; a range inside is a hit.
func TestHostRegsOverlap(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	page := pageSize()
	a := pages(64)
	v1, v2 := a[:20*page+100], a[10*page+3:40*page]
	use(h, 1, v1)
	use(h, 1, v1)
	held := h.acquire(1, hostArray{v1, v1})
	use(h, 2, v2)
	if use(h, 2, v2) {
		t.Fatal("merged with a registration in use")
	}
	h.release(held...)
	if !use(h, 2, v2) || len(f.locked) != 1 || !f.covers(a[:40*page]) {
		t.Fatalf("not merged: %v", f.locked)
	}
	if !use(h, 3, a[5*page:30*page]) || f.locks != 2 {
		t.Errorf("a range inside the merged one: %d locks", f.locks)
	}
	if err := h.close(1); err != nil || len(f.locked) != 1 {
		t.Errorf("closing one owner of the merged registration: %v, %v", err, f.locked)
	}
	runtime.KeepAlive(a)

	// Two arrays of one execution on a shared page (an input and an
	// output cut from one buffer): both registered, as one range.
	b := pages(16)
	in, out := hostArray{b, b[:5*page+9]}, hostArray{b, b[5*page+9 : 9*page]}
	h.acquire(4, in, out)
	regs := h.acquire(4, in, out)
	if regs[0] == nil || regs[0] != regs[1] || regs[0].inUse != 2 || !f.covers(b[:9*page]) {
		t.Errorf("an input and output sharing a page: %v, %v", regs, f.locked)
	}
	h.release(regs...)
	if regs[0].inUse != 0 {
		t.Errorf("in use %d times after release", regs[0].inUse)
	}
}

// TestHostRegsFailure: a registration the driver refuses leaves the array
// on the staging path and is not tried again while the array lives.
func TestHostRegsFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(f *fakeLocker, a []byte)
	}{
		{"refused", func(f *fakeLocker, _ []byte) { f.fail = errors.New("no") }},
		{"already registered", func(f *fakeLocker, a []byte) { f.locked[uintptr(unsafe.Pointer(&a[0]))] = len(a) }},
	} {
		f := newFakeLocker()
		h := NewHostRegs(f)
		a := pages(16)
		tc.set(f, a)
		for range 4 {
			if use(h, 1, a) {
				t.Errorf("%s: registered", tc.name)
			}
		}
		if f.locks != 1 || h.failed == nil {
			t.Errorf("%s: %d attempts, want 1; the refusal kept: %v", tc.name, f.locks, h.failed)
		}
	}
}

// TestHostRegsClose: an engine's Close unregisters what no other engine
// uses; the device's last Close, everything.
func TestHostRegsClose(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	x, y := pages(16), pages(16)
	for _, u := range []struct {
		owner int
		a     []byte
	}{{1, x}, {1, x}, {2, x}, {2, y}, {2, y}} {
		use(h, u.owner, u.a)
	}
	if err := h.close(1); err != nil || !f.covers(x) || !f.covers(y) {
		t.Fatalf("closing 1: %v, %v", err, f.locked)
	}
	if err := h.close(2); err != nil || len(f.locked) != 0 || len(h.entries) != 0 || h.bytes != 0 {
		t.Fatalf("closing 2: %v, %v", err, f.locked)
	}
	use(h, 3, x)
	use(h, 3, x)
	if addrs := h.Drain(); len(addrs) != 1 || addrs[0] != uintptr(unsafe.Pointer(&x[0])) || len(h.entries) != 0 {
		t.Errorf("drain: %x", addrs)
	}
}

// TestHostRegsGoHeapOnly: memory the GC does not own is never registered,
// and a sighting dies with its object.
func TestHostRegsGoHeapOnly(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	g := linkerArray[:]
	if goHeap(unsafe.Pointer(&g[0])) || use(h, 1, g) || use(h, 1, g) || f.locks != 0 {
		t.Errorf("a linker-allocated array was registered")
	}
	a := pages(4)
	if !goHeap(unsafe.Pointer(&a[7])) {
		t.Error("goHeap: a heap array is not")
	}
	use(h, 1, a)
	lo, hi := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&a[0]))+uintptr(len(a))
	a = nil
	runtime.GC()
	runtime.GC()
	// Another object at the dead one's addresses is seen for the first time.
	b := pages(4)
	if s := h.sighting(unsafe.Pointer(&b[0]), lo, hi); s != nil {
		t.Error("a sighting outlived its object")
	}
	runtime.KeepAlive(b)
}

var linkerArray [1 << 16]byte

// TestChunkInput: a chunk's input put together from its copies and
// gathers, as the pipeline does from registered memory, equals what
// Gather puts in staging — for every border, chunks along each axis, and
// every split between copies and gathers.
func TestChunkInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	for _, border := range []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant} {
		for _, shape := range [][]int{{40, 21}, {6, 9, 7}} {
			kshape := []int{21, 3, 3}[:len(shape)]
			spec := nd.Spec{Shape: shape, In: nd.Float32, Border: border, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, kshape...)}}
			p, err := spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			src := enginetest.RandomArray(rng, nd.Float32, shape...).Bytes()
			for _, budget := range []int{0, 21, 7, 3} {
				chunks, err := chunk.Split(p, chunk.Budget{OutElems: budget})
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range chunks {
					want := make([]byte, c.InElems*4)
					c.Gather(want, src, 4)
					for _, minDirect := range []int{0, 4, 29, 84, 1 << 30} {
						in := newChunkInput(&c, 4, minDirect)
						if msg := checkChunkInput(in, src, want); msg != "" {
							t.Errorf("%v %v budget %d chunk %d, copies from %d bytes: %s", border, shape, budget, i, minDirect, msg)
						}
					}
				}
			}
		}
	}
}

// checkChunkInput applies in's gathers and copies and compares the
// device's bytes with want.
func checkChunkInput(in chunkInput, src, want []byte) string {
	dev, stage := make([]byte, len(want)), make([]byte, len(want))
	written := make([]int, len(want))
	for _, r := range in.gathers {
		copy(stage[r.to:r.to+r.n], src[r.from:r.from+r.n])
	}
	for _, list := range []struct {
		runs []byteRun
		from []byte
	}{{in.copies, src}, {in.staged, stage}} {
		for _, r := range list.runs {
			copy(dev[r.to:r.to+r.n], list.from[r.from:r.from+r.n])
			for k := r.to; k < r.to+r.n; k++ {
				written[k]++
			}
		}
	}
	for k, n := range written {
		if n != 1 {
			return fmt.Sprintf("byte %d written %d times", k, n)
		}
	}
	if string(dev) != string(want) {
		return "differs from Gather's"
	}
	return ""
}

// TestHostRegsConcurrent: engines acquiring, releasing and closing at once
// (run with -race) leave nothing registered or in use once all are closed.
func TestHostRegsConcurrent(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	h.limit = int64(48 * pageSize()) // room for three of the four arrays
	arrays := [][]byte{pages(16), pages(16), pages(16), pages(16)}
	var mu sync.Mutex // the fake is not safe for concurrent use; HostRegs calls it under its lock only
	locked := &lockedLocker{mu: &mu, f: f}
	h.locker = locked
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				a := arrays[(g+i)%len(arrays)]
				b := arrays[(g+i+1)%len(arrays)]
				regs := h.acquire(g, hostArray{a, a}, hostArray{b, b[pageSize():]})
				h.release(regs...)
			}
			h.close(g)
		}()
	}
	wg.Wait()
	if len(f.locked) != 0 || len(h.entries) != 0 || h.bytes != 0 {
		t.Errorf("after every engine closed: %d ranges locked, %d entries, %d bytes", len(f.locked), len(h.entries), h.bytes)
	}
}

// lockedLocker serialises a fakeLocker, so that a call outside HostRegs'
// lock would show as a race on f rather than pass unseen.
type lockedLocker struct {
	mu *sync.Mutex
	f  *fakeLocker
}

func (l *lockedLocker) LockPages(addr uintptr, n int) error {
	if !l.mu.TryLock() {
		panic("LockPages called concurrently")
	}
	defer l.mu.Unlock()
	return l.f.LockPages(addr, n)
}

func (l *lockedLocker) UnlockPages(addr uintptr) error {
	if !l.mu.TryLock() {
		panic("UnlockPages called concurrently")
	}
	defer l.mu.Unlock()
	return l.f.UnlockPages(addr)
}
