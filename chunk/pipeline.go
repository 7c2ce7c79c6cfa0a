package chunk

import (
	"context"
	"fmt"

	"github.com/ndconv/ndconv/nd"
)

// Pipeline is the order a GPU backend moves chunks through its slots in,
// Depth chunks in flight: chunk i takes slot i mod Depth once Drain has
// finished the chunk the slot held (waited for its copy out and emptied
// its staging into the output); Queue then gathers chunk i into the slot
// and queues its copy in, kernels and copy out without waiting. After the
// last chunk every slot is drained in order. The backends own the
// streams, queues and events; the order, the error handling and the
// progress live here.
type Pipeline struct {
	Depth int
	Queue func(slot, chunk int) error
	Drain func(slot, chunk int) error
	// Abort waits for everything queued, after an error or cancellation,
	// so that the slots can be used again.
	Abort func()
}

// Run moves n chunks through the pipeline, checking ctx before each and
// reporting chunks drained out of n to progress (which may be nil). An
// error, named by its chunk when there are several, stops it after Abort.
func (pl Pipeline) Run(ctx context.Context, n int, progress nd.Progress) (err error) {
	held := make([]int, pl.Depth) // the chunk in each slot, −1 for none
	for i := range held {
		held[i] = -1
	}
	current := 0
	drain := func(slot int) error {
		i := held[slot]
		if i < 0 {
			return nil
		}
		held[slot] = -1
		current = i
		if err := pl.Drain(slot, i); err != nil {
			return err
		}
		if progress != nil {
			progress.Report(int64(i+1), int64(n))
		}
		return nil
	}
	defer func() {
		if err != nil {
			pl.Abort()
			if n > 1 && ctx.Err() == nil {
				err = fmt.Errorf("chunk %d of %d: %w", current+1, n, err)
			}
		}
	}()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		slot := i % pl.Depth
		if err := drain(slot); err != nil {
			return err
		}
		current = i
		held[slot] = i
		if err := pl.Queue(slot, i); err != nil {
			return err
		}
	}
	for k := range pl.Depth {
		if err := drain((n + k) % pl.Depth); err != nil {
			return err
		}
	}
	return nil
}
