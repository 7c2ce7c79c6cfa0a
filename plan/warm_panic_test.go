package plan

import (
	"strings"
	"testing"
)

// TestPrewarmRecoversPanic: a panic while Prewarm opens a device, on its
// own goroutine, is the Warm's error instead of the end of the process.
func TestPrewarmRecoversPanic(t *testing.T) {
	prewarmHook = func(Device) { panic("driver bug") }
	t.Cleanup(func() { prewarmHook = nil })
	w := Prewarm(Device{Kind: "cuda"})
	defer w.Close()
	if err := w.Wait(); err == nil || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "driver bug") {
		t.Errorf("Wait: %v, want the recovered panic", err)
	}
}
