package nd

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestForEach: every item once, on at most the workers asked for; a panic
// on any worker comes back as a *PanicError with its value and stack, the
// other workers stopped; stop ends the loop early.
func TestForEach(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 7} {
		seen := make([]atomic.Int32, 100)
		if err := ForEach(workers, len(seen), nil, func(_, i int) { seen[i].Add(1) }); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("%d workers: item %d ran %d times", workers, i, seen[i].Load())
			}
		}
		err := ForEach(workers, 1000, nil, func(_, i int) {
			if i == 37 {
				panic("item 37")
			}
		})
		var p *PanicError
		if !errors.As(err, &p) || p.Value != "item 37" || len(p.Stack) == 0 || !strings.Contains(err.Error(), "internal error") {
			t.Fatalf("%d workers: %v, want a *PanicError of item 37 with a stack", workers, err)
		}
		var ran atomic.Int32
		if err := ForEach(workers, 1000, func() bool { return ran.Load() >= 10 }, func(_, _ int) { ran.Add(1) }); err != nil || ran.Load() > 10+int32(max(workers, 1)) {
			t.Fatalf("%d workers: stop after 10 ran %d items (%v)", workers, ran.Load(), err)
		}
	}
	if err := ForEach(4, 0, nil, func(_, _ int) { t.Error("an item of none") }); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverPanic(t *testing.T) {
	f := func() (err error) {
		defer RecoverPanic(&err)
		panic("boom")
	}
	var p *PanicError
	if err := f(); !errors.As(err, &p) || p.Value != "boom" {
		t.Fatalf("got %v", err)
	}
}
