package cpu

import (
	"context"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
)

// separableScratchLimit bounds the intermediates of one separable
// execution: a larger problem runs chunk by chunk (package chunk), so that
// a volume's float32 intermediates never take several times its size. A
// variable so that tests can force chunks.
var separableScratchLimit int64 = 256 << 20

// separableScratch is the bytes of the separable method's intermediates:
// up to two arrays of the largest intermediate, in the accumulator type.
func separableScratch(p *nd.Problem) int64 {
	acc := int64(4)
	if p.Wide {
		acc = 8
	}
	shape := slices.Clone(p.InShape)
	var biggest int64
	passes := 0
	for d := len(shape) - 1; d >= 0; d-- {
		if p.KShape[d] > 1 {
			shape[d] = p.OutShape[d]
			biggest = max(biggest, int64(product(shape)))
			passes++
		}
	}
	return int64(min(max(passes-1, 0), 2)) * biggest * acc
}

// chunked runs a problem chunk by chunk, each chunk's sub-problem on an
// engine of its own; chunks of the same geometry (all but the edges) share
// one engine and its scratch memory.
type chunked struct {
	chunks    []chunk.Chunk
	opt       Options
	newEngine func(*nd.Problem, Options) (Executable, error)
	last      *nd.Problem
	engine    Executable
}

func newChunked(p *nd.Problem, opt Options, b chunk.Budget, newEngine func(*nd.Problem, Options) (Executable, error)) (Executable, error) {
	chunks, err := chunk.Split(p, b)
	if err != nil {
		return nil, err
	}
	return &chunked{chunks: chunks, opt: opt, newEngine: newEngine}, nil
}

// Execute reports chunks done out of the total as progress.
func (c *chunked) Execute(ctx context.Context, dst, src nd.Array) error {
	inner := c.opt
	inner.Progress = nil
	return chunk.Run(ctx, c.chunks, src, c.opt.Progress, func(ctx context.Context, ch *chunk.Chunk, src nd.Array) error {
		if c.last == nil || !chunk.SameGeometry(c.last, ch.Problem) {
			e, err := c.newEngine(ch.Problem, inner)
			if err != nil {
				return err
			}
			c.last, c.engine = ch.Problem, e
		}
		return c.engine.Execute(ctx, ch.Output(dst), src)
	})
}
