package cpu

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestParallelRecoversPanics: a panic in a work item, on the caller's
// goroutine (one worker) or on a pool goroutine (several), comes back as a
// *nd.PanicError with its value and stack instead of ending the process.
func TestParallelRecoversPanics(t *testing.T) {
	for _, workers := range []int{1, 4} {
		err := parallel(context.Background(), workers, 64, &tracker{}, func(_, item int) {
			if item == 37 {
				panic("item 37")
			}
		})
		var p *nd.PanicError
		if !errors.As(err, &p) || p.Value != "item 37" || !strings.Contains(err.Error(), "internal error") || len(p.Stack) == 0 {
			t.Errorf("%d workers: %v, want a *nd.PanicError of item 37 with a stack", workers, err)
		}
	}
	err := serial(context.Background(), 64, &tracker{}, func(_, item int) {
		if item == 37 {
			panic("item 37")
		}
	})
	if p := (*nd.PanicError)(nil); !errors.As(err, &p) || p.Value != "item 37" || len(p.Stack) == 0 {
		t.Errorf("serial: %v, want a *nd.PanicError of item 37 with a stack", err)
	}
	if err := parallel(context.Background(), 4, 64, &tracker{}, func(_, _ int) {}); err != nil {
		t.Errorf("no panic: %v", err)
	}
}
