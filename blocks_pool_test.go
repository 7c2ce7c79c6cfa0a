package ndconv

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// TestEnginePool: workers taking executables of random geometries (more
// than a device keeps) each get one of their block's geometry, used by
// no other worker at the same time; no more than perDevice of a geometry
// are made at once; and every executable made is closed at the end,
// those of geometries evicted while in use included.
func TestEnginePool(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	k := enginetest.RandomKernel(rng, true, 3, 3)
	var problems []*nd.Problem
	for i := range 7 {
		spec := nd.Spec{Shape: []int{8 + i, 9}, In: nd.Float32, Kernels: []nd.Kernel{k}}
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, p)
	}
	pool := &enginePool{opt: plan.Options{Method: Direct}, perDevice: 2}
	var mu sync.Mutex
	inUse := map[*plan.Executable]bool{}
	perKind := map[*engineKind]int{}
	var all []*plan.Executable
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for range 200 {
				p := problems[r.IntN(len(problems))]
				e, err := pool.get(context.Background(), plan.Device{Kind: "cpu"}, p)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if inUse[e.exec] {
					t.Error("an executable given to two workers at once")
				}
				if !slices.Equal(e.exec.Problem.InShape, p.InShape) {
					t.Errorf("an executable of %v for a block of %v", e.exec.Problem.InShape, p.InShape)
				}
				inUse[e.exec] = true
				if perKind[e.kind]++; perKind[e.kind] > pool.perDevice {
					t.Errorf("%d executables of one geometry in use at once, at most %d made", perKind[e.kind], pool.perDevice)
				}
				all = append(all, e.exec)
				mu.Unlock()
				mu.Lock()
				inUse[e.exec] = false
				perKind[e.kind]--
				mu.Unlock()
				pool.put(e)
			}
		}()
	}
	wg.Wait()
	pool.close()
	for _, e := range all {
		if !e.Closed() {
			t.Fatal("an executable left open after the pool's close")
		}
	}
}
