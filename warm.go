package ndconv

import "github.com/ndconv/ndconv/plan"

// Warm is a GPU being opened in the background (Prewarm): the driver
// loaded and the context created while the caller does other work, so that
// plans made meanwhile find it open. It holds the device open until Close.
type Warm struct{ w *plan.Warm }

// Wait waits for the opening to end and returns its error: nil where it
// succeeded or where there was nothing to open (the CPU).
func (w *Warm) Wait() error {
	if w == nil || w.w == nil {
		return nil
	}
	return w.w.Wait()
}

// Device is the GPU being opened ("" until auto's choice is known, and
// where there is none).
func (w *Warm) Device() string {
	if w == nil || w.w == nil {
		return ""
	}
	if d := w.w.Device(); d.Kind != "" {
		return d.String()
	}
	return ""
}

// Close lets go of the device the Warm holds (plans that opened it keep
// it open) without waiting: one still opening lets go when it is done.
// Closing twice, or closing a nil Warm, does nothing.
func (w *Warm) Close() error {
	if w == nil {
		return nil
	}
	return w.w.Close()
}
