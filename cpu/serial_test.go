package cpu

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestReusedPlanAllocatesNothing: executing a prepared small problem again
// allocates nothing, on the direct and separable methods (issue 33: no
// overhead for small calls); the first call makes the scratch memory.
func TestReusedPlanAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{16, 64} {
		for _, dt := range []nd.DType{nd.Float32, nd.Uint8, nd.Float64} {
			for _, m := range methods {
				src := enginetest.RandomArray(rng, dt, n, n)
				spec := nd.Spec{Shape: src.Shape, In: dt, Kernels: []nd.Kernel{enginetest.RandomFactors(rng, 3, 3)}}
				p, err := spec.Normalize()
				if err != nil {
					t.Fatal(err)
				}
				dst, _ := nd.New(p.Out, p.FullShape()...)
				e := m.new(p, Options{})
				ctx := context.Background()
				allocs := testing.AllocsPerRun(20, func() {
					if err := e.Execute(ctx, dst, src); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 0 {
					t.Errorf("%s %v %d×%d: %v allocations per call, want 0", m.name, dt, n, n, allocs)
				}
			}
		}
	}
}

// TestSerialSameBitsAsPool: a problem run on the calling goroutine gives
// the bits the pool gives (its tiles are cut differently), and both match
// the reference.
func TestSerialSameBitsAsPool(t *testing.T) {
	defer func(w int) { serialWork = w }(serialWork)
	for _, c := range enginetest.Random(33, 120) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range methods {
			if !m.supports(p) {
				continue
			}
			var got [2][]byte
			for i, work := range []int{0, 1 << 62} {
				serialWork = work
				dst, _ := nd.New(p.Out, p.FullShape()...)
				if err := m.new(p, Options{Workers: 3}).Execute(context.Background(), dst, c.Input); err != nil {
					t.Fatalf("%s %s: %v", c.Name, m.name, err)
				}
				got[i] = dst.Bytes()
				if i == 1 {
					if msg := c.Check(dst, c.Want()); msg != "" {
						t.Errorf("%s %s serial: %s", c.Name, m.name, msg)
					}
				}
			}
			if !bytes.Equal(got[0], got[1]) {
				t.Errorf("%s %s: serial and pool results differ", c.Name, m.name)
			}
		}
	}
}

// TestSerialProgressAndCancel: a serial call reports each item and stops
// at a cancelled context with its error.
func TestSerialProgressAndCancel(t *testing.T) {
	var reports []string
	tr := &tracker{progress: progressFunc(func(done, total int64) { reports = append(reports, fmt.Sprint(done, "/", total)) }), total: 3}
	if err := serial(context.Background(), 3, tr, func(_, _ int) {}); err != nil || fmt.Sprint(reports) != "[1/3 2/3 3/3]" {
		t.Errorf("serial: %v, reports %v", err, reports)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := 0
	err := serial(ctx, 10, &tracker{}, func(_, i int) {
		if ran++; i == 1 {
			cancel()
		}
	})
	if err != context.Canceled || ran != 2 {
		t.Errorf("cancelled after item 1: %v after %d items, want context.Canceled after 2", err, ran)
	}
}

type progressFunc func(done, total int64)

func (f progressFunc) Report(done, total int64) { f(done, total) }
