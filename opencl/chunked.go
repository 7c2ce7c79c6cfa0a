package opencl

import (
	"context"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// chunks splits the engine's problem (package chunk) so that each chunk's
// input, output and temporaries fit the memory budget: the options'
// MemoryBudget, else the smaller of the device's largest buffer and 70% of
// its memory, so that no buffer passes what one allocation allows. A
// problem that fits is one chunk.
func (e *Engine) chunks() ([]chunk.Chunk, error) {
	budget := memoryBudget(e.dev.Info(), e.opt.MemoryBudget)
	var scratch func(*nd.Problem) int64
	if e.family == "separable" {
		opt := separableOptions(e.dev.Info(), e.opt.Tuning)
		acc := int64(4)
		if e.p.Wide {
			acc = 8
		}
		scratch = func(q *nd.Problem) int64 {
			s, err := kernels.NewSeparable(q, opt)
			if err != nil || s == nil {
				return 0
			}
			return int64(s.Temps) * int64(s.TempElems) * acc
		}
	}
	return chunk.Split(e.p, chunk.Budget{Bytes: budget, Scratch: scratch})
}

// executeChunks runs a split problem chunk by chunk, each chunk's
// sub-problem on an engine of this engine's family.
func (e *Engine) executeChunks(ctx context.Context, chunks []chunk.Chunk, dst, src nd.Array) error {
	opt := e.opt
	opt.Progress = nil
	newEngine := NewDirect
	if e.family == "separable" {
		newEngine = NewSeparable
	}
	return runChunks(ctx, chunks, dst, src, e.opt.Progress, func(p *nd.Problem) (*Engine, error) { return newEngine(p, opt) })
}

// chunkEngine is what runChunks needs of an engine.
type chunkEngine interface {
	Execute(ctx context.Context, dst, src nd.Array) error
	Close() error
}

// runChunks runs a split problem chunk by chunk, each chunk's sub-problem
// on an engine newEngine makes; chunks of one geometry (all but those at
// the edges) share an engine and its built kernels. It reports chunks done
// out of the total as progress.
func runChunks[E chunkEngine](ctx context.Context, chunks []chunk.Chunk, dst, src nd.Array, progress nd.Progress, newEngine func(*nd.Problem) (E, error)) error {
	type sub struct {
		p *nd.Problem
		e E
	}
	var engines []sub
	defer func() {
		for _, s := range engines {
			s.e.Close()
		}
	}()
	return chunk.Run(ctx, chunks, src, progress, func(ctx context.Context, c *chunk.Chunk, src nd.Array) error {
		i := slices.IndexFunc(engines, func(s sub) bool { return chunk.SameGeometry(s.p, c.Problem) })
		if i < 0 {
			e, err := newEngine(c.Problem)
			if err != nil {
				return err
			}
			engines = append(engines, sub{c.Problem, e})
			i = len(engines) - 1
		}
		return engines[i].e.Execute(ctx, c.Output(dst), src)
	})
}
