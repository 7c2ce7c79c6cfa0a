package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ndconv/ndconv"
)

// progressDelay is how long work runs before a bar appears: short work
// finishes without one, so quick commands print nothing extra.
const progressDelay = time.Second

// terminalProgress draws a progress bar on a terminal for work that runs
// longer than progressDelay. It receives the engine's reports through
// ndconv.Progress, the one interface every backend reports through.
type terminalProgress struct {
	w     io.Writer
	what  string
	start time.Time
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	// describe, when not nil, says more than the count (the bytes a
	// run in blocks has read and written), on the bar after what.
	describe func() string
}

// newProgress returns a progress bar for what on stderr when stderr is a
// terminal and quiet is false, and nil otherwise (no reports at all).
func newProgress(stderr io.Writer, what string, quiet bool) *terminalProgress {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &terminalProgress{w: stderr, what: what, start: time.Now()}
}

// Report implements ndconv.Progress.
func (p *terminalProgress) Report(done, total int64) {
	if time.Since(p.start) < progressDelay {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.what),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	if p.describe != nil {
		p.bar.Describe(p.what + " (" + p.describe() + ")")
	}
	if p.bar.GetMax64() != total {
		p.bar.ChangeMax64(total)
	}
	p.bar.Set64(done)
}

// finish removes a bar that was drawn.
func (p *terminalProgress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}

// reporter returns p as an ndconv.Progress, nil when there is no bar (a nil
// *terminalProgress in the interface would not be nil).
func (p *terminalProgress) reporter() ndconv.Progress {
	if p == nil {
		return nil
	}
	return p
}
