package gputest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

func TestSharedOpensOnce(t *testing.T) {
	var s Shared[*int]
	opened := 0
	open := func() (*int, error) { opened++; v := opened; return &v, nil }
	ok := func() error { return nil }
	a := s.Get(t, "test", ok, open)
	if b := s.Get(t, "test", ok, open); b != a || opened != 1 || s.Current() != a {
		t.Errorf("opened %d times", opened)
	}
	s.Forget()
	if s.Current() != nil {
		t.Error("Forget kept the device")
	}
	if c := s.Get(t, "test", ok, open); c == a || *c != 2 {
		t.Error("Get after Forget did not open again")
	}
	t.Run("unavailable", func(t *testing.T) {
		var s Shared[*int]
		s.Get(t, "test", func() error { return errors.New("none here") }, open)
		t.Error("not skipped")
	})
}

func TestTogether(t *testing.T) {
	var sum atomic.Int64
	Together(10, func(i int) { sum.Add(int64(i)) })
	if sum.Load() != 45 {
		t.Errorf("sum %d", sum.Load())
	}
}

// cpuEngine is the CPU's direct method as an Engine.
type cpuEngine struct{ cpu.Executable }

func (cpuEngine) Close() error { return nil }

func TestRunAndSpread(t *testing.T) {
	cases := enginetest.Random(3, 12)
	run := func(c enginetest.Case) (nd.Array, error) {
		return Run(c, func(p *nd.Problem) (cpuEngine, error) { return cpuEngine{cpu.NewDirect(p, cpu.Options{})}, nil })
	}
	if failures := Spread(cases, 4, run); len(failures) != 0 {
		t.Errorf("the CPU engine fails: %v", failures)
	}
	var calls atomic.Int64
	failures := Spread(cases, 3, func(c enginetest.Case) (nd.Array, error) {
		calls.Add(1)
		return nd.Array{}, errors.New("broken")
	})
	if len(failures) != len(cases) || calls.Load() != int64(len(cases)) || !strings.HasSuffix(failures[0], ": broken") {
		t.Errorf("%d failures for %d cases: %v", len(failures), len(cases), failures)
	}
	// A wrong result is a mismatch.
	c := cases[0]
	failures = Spread(cases[:1], 2, func(enginetest.Case) (nd.Array, error) {
		p, _ := c.Spec.Normalize()
		dst, _ := nd.New(p.Out, p.FullShape()...)
		return dst, cpu.NewDirect(p, cpu.Options{}).Execute(context.Background(), dst, enginetest.RandomArray(rand.New(rand.NewPCG(9, 9)), c.Spec.In, c.Spec.Shape...))
	})
	if len(failures) != 1 {
		t.Errorf("a wrong result passed: %v", failures)
	}
}

func TestWorkloads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, w := range TimingWorkloads() {
		if p, err := w.Problem(rng); err != nil || len(p.Kernels) != w.Bank {
			t.Errorf("%v: %v", w, err)
		}
	}
	summary := func(w Workload) string {
		p, err := w.Problem(rng)
		if err != nil {
			t.Fatalf("%v: %v", w, err)
		}
		return w.Summary(p, []float64{4, 1, 2})
	}
	w := Workload{nd.Float32, nd.Float32, []int{1000, 1000}, []int{3, 3}, 2, nd.Same}
	got := summary(w)
	want := "float32→float32 [1000 1000] kernel [3 3] bank 2: median 2.000 ms (min 1.000), 6 GB/s, 18 GFLOP/s"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Valid: 500 × 1000 outputs of 501 taps × 2 kernels, each written.
	w = Workload{nd.Float32, nd.Float32, []int{1000, 1000}, []int{501, 1}, 2, nd.Valid}
	got = summary(w)
	want = "float32→float32 [1000 1000] kernel [501 1] bank 2: median 2.000 ms (min 1.000), 4 GB/s, 501 GFLOP/s"
	if got != want {
		t.Errorf("valid: got  %q\nwant %q", got, want)
	}
}

func TestTimingProblems(t *testing.T) {
	t.Setenv("NDCONV_TIMING", "1")
	n := 0
	for w, p := range TimingProblems(t) {
		if !slices.Equal(p.FullShape()[:len(w.Shape)], w.Shape) || len(p.Kernels) != w.Bank {
			t.Errorf("%v: problem %v", w, p.FullShape())
		}
		n++
	}
	if n != len(TimingWorkloads()) {
		t.Errorf("%d problems", n)
	}
	t.Setenv("NDCONV_TIMING", "")
	t.Run("skipped", func(t *testing.T) {
		for range TimingProblems(t) {
			t.Error("a problem without NDCONV_TIMING=1")
		}
		t.Error("not skipped")
	})
}

// TestEach checks that Each calls every index once, returns the failures
// in index order whatever the workers, and stops starting calls after
// MaxFailures.
func TestEach(t *testing.T) {
	for _, workers := range []int{1, 3, 64} {
		var calls [50]atomic.Int32
		got := Each(len(calls), workers, func(i int) string {
			calls[i].Add(1)
			if i%7 == 3 {
				return fmt.Sprint(i)
			}
			return ""
		})
		if want := []string{"3", "10", "17", "24", "31", "38", "45"}; !slices.Equal(got, want) {
			t.Errorf("%d workers: failures %q, want %q", workers, got, want)
		}
		for i := range calls {
			if n := calls[i].Load(); n != 1 {
				t.Errorf("%d workers: index %d called %d times", workers, i, n)
			}
		}
	}
	if got := Each(0, 4, func(int) string { t.Error("called with n = 0"); return "" }); got != nil {
		t.Errorf("n = 0: %q", got)
	}
	var calls atomic.Int32
	got := Each(1000, 1, func(int) string { calls.Add(1); return "broken" })
	if len(got) != MaxFailures || calls.Load() != MaxFailures {
		t.Errorf("every call failing: %d failures after %d calls, want %d", len(got), calls.Load(), MaxFailures)
	}
}
