//go:build unix

package gpu

import (
	"syscall"
	"testing"
	"unsafe"
)

// mapped returns n bytes of anonymous memory the Go runtime does not own,
// as C memory or a memory-mapped file is.
func mapped(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		tb.Skip("mmap:", err)
	}
	tb.Cleanup(func() { syscall.Munmap(b) })
	return b
}

// TestHostRegsNotMapped: memory outside the Go heap is never registered,
// however often it is executed: freed and mapped again at the same
// addresses, it would be other pages under a registration kept by
// address.
func TestHostRegsNotMapped(t *testing.T) {
	f := newFakeLocker()
	h := NewHostRegs(f)
	m := mapped(t, 16*pageSize())
	if goHeap(unsafe.Pointer(&m[0])) {
		t.Fatal("goHeap: mapped memory is Go heap")
	}
	for range 4 {
		if use(h, 1, m) {
			t.Fatal("mapped memory registered")
		}
	}
	if f.locks != 0 || len(h.sightings) != 0 {
		t.Errorf("%d registrations tried, %d sightings", f.locks, len(h.sightings))
	}
}

// BenchmarkHostRegs is the host's cost of acquire and release per array
// and execution: an array already registered, one seen for the first time
// (the Go heap probe and a weak pointer), and memory outside the Go heap
// (the probe's recovered panic).
func BenchmarkHostRegs(b *testing.B) {
	b.Run("registered", func(b *testing.B) {
		h := NewHostRegs(newFakeLocker())
		a := pages(64)
		use(h, 1, a)
		use(h, 1, a)
		for b.Loop() {
			use(h, 1, a)
		}
	})
	b.Run("first-sight", func(b *testing.B) {
		h := NewHostRegs(newFakeLocker())
		a := pages(64)
		for b.Loop() {
			h.sightings = h.sightings[:0]
			use(h, 1, a)
		}
	})
	b.Run("not-go-heap", func(b *testing.B) {
		h := NewHostRegs(newFakeLocker())
		m := mapped(b, 64*pageSize())
		for b.Loop() {
			use(h, 1, m)
		}
	})
}
