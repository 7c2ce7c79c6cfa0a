package ndconv

import (
	"context"
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// ExecuteChunks filters src chunk by chunk (package chunk), each chunk's
// input and output within about budget bytes (raised, up to 16-fold, to
// hold two output rows along axis 0 with their halo: chunks of whole rows
// read src in place, narrower ones gather a copy), and hands each chunk's
// output to sink with its offset in the whole output (in elements, bank
// included), in order: the chunks put together equal Execute's output bit
// for bit. Host memory holds one chunk's output (and its input, where the
// chunk's rows are not contiguous in src) at a time, so src may be a
// memory-mapped file and sink may write a file. Progress, when the plan
// has one, counts chunks; ctx is checked between chunks.
func (p *Plan) ExecuteChunks(ctx context.Context, src Array, budget int64, sink func(offset int, out Array) error) error {
	if err := src.Check(); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if src.DType() != p.inType || !slices.Equal(src.Shape, p.problem.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", src.DType(), src.Shape, p.inType, p.problem.InShape)}
	}
	chunks, err := chunk.Split(p.problem, chunk.Budget{Bytes: wholeRows(p.problem, budget)})
	if err != nil {
		return err
	}
	// Every chunk runs the whole plan's method on its device: a method
	// chosen anew for a chunk's shape could add the products differently.
	opt := p.opt
	opt.Device, opt.Method, opt.Progress = p.exec.Device, p.exec.Method, nil
	var exec *plan.Executable
	defer func() {
		if exec != nil {
			exec.Close()
		}
	}()
	return chunk.Run(ctx, chunks, src, p.opt.Progress, func(ctx context.Context, c *chunk.Chunk, src nd.Array) error {
		if exec == nil || !chunk.SameGeometry(exec.Problem, c.Problem) {
			if exec != nil {
				exec.Close()
			}
			var err error
			if exec, err = plan.New(c.Problem, opt); err != nil {
				return err
			}
		}
		out, err := nd.New(p.problem.Out, c.Problem.FullShape()...)
		if err != nil {
			return err
		}
		if err := exec.Execute(ctx, out, src); err != nil {
			return err
		}
		return sink(c.OutOffset, out)
	})
}

// ExecuteChunks is Plan.ExecuteChunks for filters that run as one kernel
// bank (Chunked); filters of several terms are refused.
func (fp *FilterPlan) ExecuteChunks(ctx context.Context, src Array, budget int64, sink func(offset int, out Array) error) error {
	if fp.bank == nil {
		return &nd.ArgumentError{Arg: "filters", Msg: "filters of several terms do not run chunk by chunk"}
	}
	return fp.bank.ExecuteChunks(ctx, src, budget, sink)
}

// Chunked reports whether ExecuteChunks can run the filters: whether they
// run as one kernel bank.
func (fp *FilterPlan) Chunked() bool { return fp.bank != nil }

// wholeRows raises budget, up to 16-fold, to hold two output rows along
// axis 0 with the input rows they read.
func wholeRows(p *nd.Problem, budget int64) int64 {
	in, out := int64(p.In.Size()), int64(p.Out.Size()*len(p.Kernels))
	for d := 1; d < len(p.InShape); d++ {
		in *= int64(p.InShape[d])
		out *= int64(p.OutShape[d])
	}
	rows := int64(p.KShape[0]+1)*in + 2*out
	return max(budget, min(rows, 16*budget))
}
