package chunk

import (
	"runtime"
	"sync"
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
