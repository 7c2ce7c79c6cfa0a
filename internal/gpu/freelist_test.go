package gpu

import (
	"errors"
	"testing"
)

func TestSizeClass(t *testing.T) {
	prev := 0
	classes := map[int]bool{}
	for n := 1; n <= 1<<30; n += 1 + n/7 {
		c := SizeClass(n)
		if c < n || c < minSizeClass {
			t.Fatalf("SizeClass(%d) = %d, too small", n, c)
		}
		if limit := map[bool]float64{true: 1.25, false: 1.03}[n <= coarseClassesUpTo]; n > minSizeClass && float64(c) > limit*float64(n) {
			t.Fatalf("SizeClass(%d) = %d wastes more than 25%%", n, c)
		}
		if c < prev {
			t.Fatalf("SizeClass(%d) = %d, smaller than for a smaller size", n, c)
		}
		if SizeClass(c) != c {
			t.Fatalf("class %d is not its own class", c)
		}
		prev = c
		classes[c] = true
	}
	// Four classes per power of two up to 64 MiB: few lists for a wide
	// range of sizes.
	small := 0
	for c := range classes {
		if c <= coarseClassesUpTo {
			small++
		}
	}
	if small > 4*17+1 {
		t.Errorf("%d classes up to 64 MiB", small)
	}
	for n, want := range map[int]int{1: 512, 512: 512, 513: 640, 1000: 1024, 1025: 1280, 3 << 20: 3 << 20, 3<<20 + 1: 3<<20 + 1<<19, 64 << 20: 64 << 20, 64<<20 + 1: 66 << 20, 100 << 20: 100 << 20} {
		if got := SizeClass(n); got != want {
			t.Errorf("SizeClass(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestFreeList: Take hits only what Put kept, of its class; Put refuses
// past the limit; Drain hands back everything idle.
func TestFreeList(t *testing.T) {
	f := NewFreeList[int](3 * 1024)
	if _, ok := f.Take(1024); ok {
		t.Fatal("an empty list gave an allocation")
	}
	for i := range 3 {
		if !f.Put(i, 1024) {
			t.Fatalf("Put %d refused under the limit", i)
		}
	}
	if f.Put(9, 512) {
		t.Error("Put past the limit kept it")
	}
	if _, ok := f.Take(2048); ok {
		t.Error("a class never put was served")
	}
	if v, ok := f.Take(1024); !ok || v != 2 {
		t.Errorf("Take = %d, %v; want the last put, 2", v, ok)
	}
	s := f.Stats()
	if s.Hits != 1 || s.Misses != 2 || s.IdleBytes != 2048 {
		t.Errorf("stats %+v", s)
	}
	if got := f.Drain(); len(got) != 2 || f.Stats().IdleBytes != 0 {
		t.Errorf("Drain = %v, idle %d", got, f.Stats().IdleBytes)
	}
}

// TestFreeListAlloc: a failure for want of memory frees the idle
// allocations and tries once more; any other failure leaves them.
func TestFreeListAlloc(t *testing.T) {
	errFull, errOther := errors.New("full"), errors.New("other")
	for _, tc := range []struct {
		first     error
		wantFreed int
		wantErr   error
	}{{errFull, 2, nil}, {errOther, 0, errOther}} {
		f := NewFreeList[int](1 << 20)
		f.Put(1, 1024)
		f.Put(2, 2048)
		calls, freed := 0, 0
		v, err := f.Alloc(func() (int, error) {
			calls++
			if calls == 1 {
				return 0, tc.first
			}
			return 7, nil
		}, func(err error) bool { return err == errFull }, func(int) error { freed++; return nil })
		if freed != tc.wantFreed || err != tc.wantErr || (err == nil && v != 7) {
			t.Errorf("first failure %v: value %d, error %v, %d freed; want error %v, %d freed", tc.first, v, err, freed, tc.wantErr, tc.wantFreed)
		}
	}
}

// TestFreeListGet: a size's class is served from the list, else alloc is
// asked for the whole class.
func TestFreeListGet(t *testing.T) {
	f := NewFreeList[int](1 << 20)
	asked := 0
	alloc := func(class int) (int, error) { asked = class; return 99, nil }
	if v, class, err := f.Get(1000, alloc); v != 99 || class != 1024 || asked != 1024 || err != nil {
		t.Errorf("miss: %d, class %d, asked %d, %v", v, class, asked, err)
	}
	f.Put(5, 1024)
	asked = 0
	if v, class, err := f.Get(900, alloc); v != 5 || class != 1024 || asked != 0 || err != nil {
		t.Errorf("hit: %d, class %d, asked %d, %v", v, class, asked, err)
	}
}

// TestPooled: a Pooled allocation goes back to its list on Free, once,
// and to release where the list is full; Bytes is its first n bytes, nil
// once freed.
func TestPooled(t *testing.T) {
	list := NewFreeList[*[]byte](1024)
	released := 0
	alloc := func(class int) (*[]byte, error) { b := make([]byte, class); return &b, nil }
	mem := func(b *[]byte, n int) []byte { return (*b)[:n] }
	release := func(*[]byte) error { released++; return nil }
	p, err := GetPooled(list, 600, alloc, mem, release)
	if err != nil || len(p.Bytes()) != 600 {
		t.Fatalf("GetPooled: %v, %d bytes", err, len(p.Bytes()))
	}
	first := &p.Bytes()[0]
	q, _ := GetPooled(list, 600, alloc, mem, release) // a second 640-byte allocation
	if p.Free() != nil || p.Free() != nil || p.Bytes() != nil || list.Stats().IdleBytes != 640 {
		t.Errorf("Free twice: idle %d, bytes %v", list.Stats().IdleBytes, p.Bytes())
	}
	if q.Free() != nil || released != 1 {
		t.Errorf("a full list: %d released", released)
	}
	r, _ := GetPooled(list, 590, alloc, mem, release)
	if &r.Bytes()[0] != first || len(r.Bytes()) != 590 {
		t.Error("the freed allocation was not handed out again")
	}
}
