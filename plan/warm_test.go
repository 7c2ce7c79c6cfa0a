package plan

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/nd"
)

// watchPrewarms records the GPUs Prewarm starts opening until the test
// ends.
func watchPrewarms(t *testing.T) func() []Device {
	var mu sync.Mutex
	var started []Device
	prewarmHook = func(d Device) { mu.Lock(); started = append(started, d); mu.Unlock() }
	t.Cleanup(func() { prewarmHook = nil })
	return func() []Device { mu.Lock(); defer mu.Unlock(); return append([]Device(nil), started...) }
}

// TestPrewarmCPU: the CPU starts nothing.
func TestPrewarmCPU(t *testing.T) {
	started := watchPrewarms(t)
	w := Prewarm(Device{Kind: "cpu"})
	if err := w.Wait(); err != nil || w.Device() != (Device{}) || len(started()) != 0 {
		t.Errorf("prewarming the CPU: %v, %v, started %v", err, w.Device(), started())
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	if err := w.Close(); err != nil {
		t.Error("second Close:", err)
	}
}

// TestPrewarmAutoWithoutGPU: auto with no usable GPU starts nothing and
// leaves no error.
func TestPrewarmAutoWithoutGPU(t *testing.T) {
	if hasGPU() {
		t.Skip("this machine has a usable GPU")
	}
	started := watchPrewarms(t)
	w := Prewarm(Device{Kind: "auto"})
	defer w.Close()
	if err := w.Wait(); err != nil || len(started()) != 0 {
		t.Errorf("auto without a GPU: %v, started %v", err, started())
	}
}

// TestPrewarmFailureLeavesCPU: a CUDA prewarm that fails (no CUDA here)
// keeps its error to itself: a CPU plan made meanwhile runs, a CUDA plan
// reports the same UnavailableError as without the prewarm.
func TestPrewarmFailureLeavesCPU(t *testing.T) {
	if cuda.Available() == nil {
		t.Skip("CUDA is available here")
	}
	w := Prewarm(Device{Kind: "cuda"})
	defer w.Close()
	p, err := (&nd.Spec{Shape: []int{16, 16}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []Device{{Kind: "cpu"}, {Kind: "auto"}} {
		e, err := New(p, Options{Device: dev})
		if err != nil || e.Device.Kind != "cpu" {
			t.Fatalf("%v during a failing prewarm: %v, %v", dev, e, err)
		}
		src, _ := nd.New(nd.Float32, 16, 16)
		dst, _ := nd.New(nd.Float32, 16, 16)
		if err := e.Execute(t.Context(), dst, src); err != nil {
			t.Error(err)
		}
	}
	if err := w.Wait(); err == nil {
		t.Error("a CUDA prewarm without CUDA succeeded")
	}
	if _, inFlight, _ := warmth(Device{Kind: "cuda"}); inFlight {
		t.Error("a failed prewarm still counts as starting the device")
	}
	var ue *UnavailableError
	if _, err := New(p, Options{Device: Device{Kind: "cuda"}}); !errors.As(err, &ue) {
		t.Errorf("a CUDA plan after the failed prewarm: %v, want an UnavailableError", err)
	}
}

// TestPrewarmJoins: on a GPU, a plan made while the prewarm runs finds
// the device open (no start left in auto's estimate), and the Warm's
// Close leaves the plan's device open.
func TestPrewarmJoins(t *testing.T) {
	if cuda.Available() != nil {
		t.Skip("no CUDA here")
	}
	w := Prewarm(Device{Kind: "cuda"})
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	if open, _, _ := warmth(Device{Kind: "cuda"}); !open {
		t.Error("the prewarmed device is not open")
	}
	p, err := (&nd.Spec{Shape: []int{64, 64}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{Device: Device{Kind: "cuda"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	w.Close()
	if !cuda.IsOpen(0) {
		t.Error("closing the Warm closed the plan's device")
	}
}

// TestWarmth: a prewarm under way counts the time since it started; once
// closed it counts no more.
func TestWarmth(t *testing.T) {
	dev := Device{Kind: "cuda", Index: 7} // no such device: never open
	w := &Warm{started: time.Now().Add(-200 * time.Millisecond), dev: dev, done: make(chan struct{})}
	warming.Lock()
	if warming.by == nil {
		warming.by = map[Device]*Warm{}
	}
	warming.by[dev] = w
	warming.Unlock()
	open, inFlight, elapsed := warmth(dev)
	if open || !inFlight || elapsed < 0.2 || elapsed > 60 {
		t.Errorf("under way: open %v, in flight %v, %v s", open, inFlight, elapsed)
	}
	close(w.done)
	w.Close()
	if _, inFlight, _ := warmth(dev); inFlight {
		t.Error("a closed Warm still counts")
	}
}
