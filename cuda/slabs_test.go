package cuda

import (
	"bytes"
	"context"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestChunksGatherOnHost runs without a GPU: it gathers each chunk's input
// into staging as the pipeline does (chunk.Gather), computes the chunk's
// problem with the CPU engine and checks that the chunks put together
// equal the whole problem bit for bit, under memory budgets that split
// along one axis and along several, and forced piece sizes.
func TestChunksGatherOnHost(t *testing.T) {
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
		for _, opt := range []EngineOptions{
			{MemoryBudget: inBytes/3 + int64(len(want.Bytes()))/3}, {MemoryBudget: 64 * pipelineDepth}, {MemoryBudget: 256 * pipelineDepth},
			{MemoryBudget: 1 << 30, PieceBytes: max(inBytes/2, 1)},
		} {
			opt.MemoryBudget = max(opt.MemoryBudget, 1)
			e := &Engine{p: p, opt: opt, method: direct{}}
			chunks, err := e.chunks()
			if err != nil {
				continue // one voxel with its halo does not fit
			}
			if len(chunks) > 1 {
				split++
			}
			got, _ := nd.New(p.Out, p.FullShape()...)
			size, outSize := p.In.Size(), p.Out.Size()
			for _, ch := range chunks {
				in, _ := nd.New(p.In, ch.Problem.InShape...)
				ch.Gather(in.Bytes(), c.Input.Bytes(), size)
				out, _ := nd.New(p.Out, ch.Problem.FullShape()...)
				if err := cpu.NewDirect(ch.Problem, cpu.Options{Workers: 1}).Execute(context.Background(), out, in); err != nil {
					t.Fatal(err)
				}
				copy(got.Bytes()[ch.OutOffset*outSize:][:ch.OutElems*outSize], out.Bytes())
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s, %+v (%d chunks): differs from the whole problem", c.Name, opt, len(chunks))
			}
		}
	}
	if split < 100 {
		t.Errorf("only %d runs were split", split)
	}
}
