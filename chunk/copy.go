package chunk

import (
	"runtime"
	"sync"
	"time"
)

// parallelCopyBytes is the least a copy moves before it is spread over
// cores: below it, starting goroutines costs more than it saves.
const parallelCopyBytes = 1 << 20

// Gather copies the chunk's input from the whole input src (bytes, of
// elements of size bytes) into dst, which holds InElems elements: the runs
// of Runs, in order, spread over the cores for large chunks. It is how a
// GPU backend fills a pinned staging buffer.
func (c *Chunk) Gather(dst, src []byte, size int) {
	type run struct{ from, to, n int }
	var runs []run
	c.Runs(func(from, to, n int) { runs = append(runs, run{from * size, to * size, n * size}) })
	total := 0
	for _, r := range runs {
		total += r.n
	}
	workers := copyWorkers(total)
	if workers == 1 {
		for _, r := range runs {
			copy(dst[r.to:r.to+r.n], src[r.from:r.from+r.n])
		}
		return
	}
	// Each worker takes an equal share of the bytes, cutting runs where a
	// share ends.
	share := (total + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*share, min((w+1)*share, total)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range runs {
				a, b := max(lo, r.to), min(hi, r.to+r.n)
				if a < b {
					copy(dst[a:b], src[r.from+a-r.to:r.from+b-r.to])
				}
			}
		}()
	}
	wg.Wait()
}

// Copy is copy(dst, src) spread over the cores for large slices: how a GPU
// backend empties a pinned staging buffer into the output.
func Copy(dst, src []byte) {
	n := min(len(dst), len(src))
	workers := copyWorkers(n)
	if workers == 1 {
		copy(dst, src)
		return
	}
	share := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += share {
		hi := min(lo+share, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}

// copyWorkers is how many goroutines copy n bytes.
func copyWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/parallelCopyBytes))
}

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
