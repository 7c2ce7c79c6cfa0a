package plan

import (
	"sync"
	"time"

	"github.com/ndconv/ndconv/nd"
)

// Warm is a GPU being opened in the background (Prewarm): the driver
// loaded, the context created, so that a plan made meanwhile finds it open
// — a plan's own Open joins one in flight (the backends' registries open a
// device once). A Warm holds the device open until Close.
type Warm struct {
	started time.Time
	done    chan struct{}
	err     error

	mu       sync.Mutex
	dev      Device // the GPU being opened, once known
	released bool
	close    func() error // the hold on the device, once open
}

// AutoPrewarmMinBytes is the smallest input file for which a caller should
// prewarm auto's GPU. Below it auto keeps the problem on the CPU for any
// kernel the CPU's FFT does not take more cheaply: at the H100 host's
// rates (cost.go) the copies of 4 MiB in and out alone take 3.4 ms, in
// which 16 cores run 2 G multiply-adds — a 45×45 kernel over 1 Mi float32
// values. A start begun in vain costs the driver's time and memory, and
// may hold up the exit of the CPU run.
const AutoPrewarmMinBytes = 4 << 20

// warming is the Warms in flight or done and not closed, by device, for
// auto's estimates (warmth).
var warming struct {
	sync.Mutex
	by map[Device]*Warm
}

// prewarmHook, where set (tests), is told of every Prewarm that starts
// opening a GPU.
var prewarmHook func(Device)

// Prewarm begins opening dev in the background and returns at once: for
// cuda and opencl the device named; for auto the GPU auto would use, if
// one is usable (the check itself runs in the background too); for the CPU
// nothing. Errors are kept, not reported: a plan that needs the device
// opens it again and reports its own. Close the Warm when plans have
// opened the device (or are not going to).
func Prewarm(dev Device) *Warm {
	w := &Warm{started: time.Now(), done: make(chan struct{})}
	if !dev.IsAuto() && !dev.GPU() {
		close(w.done)
		return w
	}
	go w.open(dev)
	return w
}

// open runs in Prewarm's goroutine.
func (w *Warm) open(dev Device) {
	defer close(w.done)
	// This goroutine is no caller's: a panic here would end the process.
	// It becomes the Warm's error, kept as any other.
	defer nd.RecoverPanic(&w.err)
	if dev.IsAuto() {
		gpu, ok := usableGPU()
		if !ok {
			return
		}
		dev = gpu
	}
	b, _ := dev.Backend() // a GPU's (Prewarm)
	if r := b.Resolve(dev); r != dev {
		// A request naming no one device: only an available backend
		// says which it means.
		if w.err = b.Available(); w.err != nil {
			return
		}
		dev = r
	}
	w.mu.Lock()
	w.dev = dev
	w.mu.Unlock()
	if prewarmHook != nil {
		prewarmHook(dev)
	}
	warming.Lock()
	if warming.by == nil {
		warming.by = map[Device]*Warm{}
	}
	if warming.by[dev] == nil {
		warming.by[dev] = w
	}
	warming.Unlock()

	var closer func() error
	closer, w.err = b.Open(dev)
	if w.err != nil {
		w.unregister() // never to open: auto counts a whole start again
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.released && closer != nil {
		w.err = closer() // closed while opening: let go at once
		return
	}
	w.close = closer
}

// Wait waits for the opening to end and returns its error: nil where it
// succeeded or where there was nothing to open.
func (w *Warm) Wait() error {
	<-w.done
	return w.err
}

// Device is the GPU being opened: Kind "" until known, and where there is
// none.
func (w *Warm) Device() Device {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dev
}

// Close lets go of the device the Warm holds (plans that opened it keep
// it open) without waiting: one still opening lets go when it is done.
// Closing twice does nothing; a nil Warm does nothing.
func (w *Warm) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.released {
		return nil
	}
	w.released = true
	w.unregisterLocked()
	if w.close == nil {
		return nil
	}
	c := w.close
	w.close = nil
	return c()
}

// unregister takes w out of warming.
func (w *Warm) unregister() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unregisterLocked()
}

// unregisterLocked is unregister with w.mu held.
func (w *Warm) unregisterLocked() {
	warming.Lock()
	defer warming.Unlock()
	if warming.by[w.dev] == w {
		delete(warming.by, w.dev)
	}
}

// warmth says how far dev is from ready: open already (by a plan, a
// Memory or a finished Prewarm), or being opened by a Prewarm for the
// given seconds.
func warmth(dev Device) (open, inFlight bool, elapsed float64) {
	if b, ok := dev.Backend(); ok {
		open = b.IsOpen(dev)
	}
	if open {
		return true, false, 0
	}
	warming.Lock()
	w := warming.by[dev]
	warming.Unlock()
	if w == nil {
		return false, false, 0
	}
	return false, true, time.Since(w.started).Seconds()
}

// planned records the GPUs this process has made a plan on: a later plan
// no longer pays GPURates.ProcessSeconds.
var planned sync.Map // Device → struct{}

func markPlanned(dev Device) { planned.Store(dev, struct{}{}) }

func firstPlan(dev Device) bool {
	_, ok := planned.Load(dev)
	return !ok
}
