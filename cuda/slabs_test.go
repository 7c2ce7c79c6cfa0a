package cuda

import (
	"bytes"
	"context"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestSlabsGatherOnHost runs without a GPU: it gathers each slab's input
// rows as runSlab stages them, computes the slab's problem with the CPU
// engine and checks that the slabs put together equal the whole problem
// bit for bit, under budgets that split along one axis and along several.
func TestSlabsGatherOnHost(t *testing.T) {
	split := 0
	for _, c := range append(enginetest.Table(), enginetest.Random(11, 100)...) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := nd.New(p.Out, p.FullShape()...)
		if err := cpu.NewDirect(p, cpu.Options{Workers: 1}).Execute(context.Background(), want, c.Input); err != nil {
			t.Fatal(err)
		}
		inBytes := int64(len(c.Input.Bytes()))
		for _, budget := range []int64{inBytes/3 + int64(len(want.Bytes()))/3, 64, 256} {
			e := &Engine{p: p, opt: EngineOptions{MemoryBudget: max(budget, 1)}, method: direct{}}
			slabs, err := e.slabs()
			if err != nil {
				continue // one voxel with its halo does not fit
			}
			if len(slabs) > 1 {
				split++
			}
			got, _ := nd.New(p.Out, p.FullShape()...)
			size, outSize := p.In.Size(), p.Out.Size()
			for _, s := range slabs {
				in, _ := nd.New(p.In, s.problem.InShape...)
				staged := in.Bytes()[:0]
				rowBytes := s.rowElems * size
				for _, r := range s.rows {
					staged = append(staged, c.Input.Bytes()[r*rowBytes:(r+1)*rowBytes]...)
				}
				if len(staged) != s.inElems*size {
					t.Fatalf("%s: slab stages %d bytes, its problem reads %d", c.Name, len(staged), s.inElems*size)
				}
				out, _ := nd.New(p.Out, s.problem.FullShape()...)
				if err := cpu.NewDirect(s.problem, cpu.Options{Workers: 1}).Execute(context.Background(), out, in); err != nil {
					t.Fatal(err)
				}
				copy(got.Bytes()[s.outOffset*outSize:][:s.outElems*outSize], out.Bytes())
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s, budget %d (%d slabs): differs from the whole problem", c.Name, budget, len(slabs))
			}
		}
	}
	if split < 100 {
		t.Errorf("only %d runs were split", split)
	}
}
