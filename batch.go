package ndconv

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/ndconv/ndconv/filters"
)

// Batch applies one set of filters to many arrays — a folder of images, a
// video's frames, a training set — with one plan per distinct shape and
// dtype, made on the first array of its kind and kept for the batch's
// life, so that arrays of a kind plan, open the device and compile GPU
// kernels once. Each result equals what ApplyFilters gives for its array,
// bit for bit. A Batch is safe for concurrent use; Close releases the
// plans.
type Batch struct {
	op      Operation
	opt     Options
	filters []filters.Filter

	mu     sync.Mutex
	plans  map[string]*FilterPlan
	closed bool
}

// NewBatch makes a batch applying fs with op (correlate or convolve) and
// opt. No plan is made until an array comes.
func NewBatch(op Operation, opt Options, fs ...filters.Filter) *Batch {
	return &Batch{op: op, opt: opt, filters: slices.Clone(fs), plans: map[string]*FilterPlan{}}
}

// Plan returns the batch's plan for arrays of shape and dtype, making it
// on first use.
func (b *Batch) Plan(shape []int, dtype DType) (*FilterPlan, error) {
	key := fmt.Sprint(shape, dtype)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if p := b.plans[key]; p != nil {
		return p, nil
	}
	p, err := NewFilterPlan(b.op, shape, dtype, b.opt, b.filters...)
	if err != nil {
		return nil, err
	}
	b.plans[key] = p
	return p, nil
}

// Execute filters one array with the plan for its shape and dtype.
func (b *Batch) Execute(ctx context.Context, src Array) (Array, error) {
	p, err := b.Plan(src.Shape, src.DType())
	if err != nil {
		return Array{}, err
	}
	return p.Execute(ctx, src)
}

// All filters the arrays of srcs in order and yields each result with its
// error; the next array is drawn from srcs (read, decoded, generated)
// while the current one is filtered. A failed array does not stop the
// rest; breaking out of the loop, or ctx ending, does.
func (b *Batch) All(ctx context.Context, srcs iter.Seq[Array]) iter.Seq2[Array, error] {
	return func(yield func(Array, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		next := make(chan Array, 1)
		go func() {
			defer close(next)
			for src := range srcs {
				select {
				case next <- src:
				case <-ctx.Done():
					return
				}
			}
		}()
		for src := range next {
			if err := ctx.Err(); err != nil {
				yield(Array{}, err)
				return
			}
			if !yield(b.Execute(ctx, src)) {
				return
			}
		}
	}
}

// Close releases every plan the batch made; later calls return ErrClosed.
func (b *Batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	for _, p := range b.plans {
		errs = append(errs, p.Close())
	}
	clear(b.plans)
	return errors.Join(errs...)
}
