package chunk

import (
	"sync"
	"time"
)

// Stage is a step of a chunk on a GPU: its input copied in, its kernels,
// its output copied out.
type Stage uint8

const (
	CopyIn Stage = iota
	Kernel
	CopyOut
)

func (s Stage) String() string {
	return [...]string{"copy-in", "kernel", "copy-out"}[s]
}

// Span is one stage of one chunk on a GPU's clock, from the start of the
// execution: what a timeline of a pipelined run is made of, to show copies
// and kernels overlapping.
type Span struct {
	Chunk      int
	Stage      Stage
	Start, End time.Duration
}

// Timeline collects the spans of a pipelined execution when a backend is
// given one. It is safe for concurrent use.
type Timeline struct {
	mu    sync.Mutex
	spans []Span
}

// Add records spans.
func (t *Timeline) Add(s ...Span) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spans = append(t.spans, s...)
}

// Spans returns the spans recorded so far, in the order they were added.
func (t *Timeline) Spans() []Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Span(nil), t.spans...)
}

// Reset forgets the spans recorded so far.
func (t *Timeline) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spans = nil
}

// Overlap is how long two different stages ran at the same time, summed
// over every pair of spans of different stages: above zero when copies and
// kernels overlapped.
func Overlap(spans []Span) time.Duration {
	var total time.Duration
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.Stage != b.Stage {
				if d := min(a.End, b.End) - max(a.Start, b.Start); d > 0 {
					total += d
				}
			}
		}
	}
	return total
}
