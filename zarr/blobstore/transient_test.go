package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

// TestTransient: what is retried and what is not.
func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{statusErr(500), true}, {statusErr(503), true}, {statusErr(429), true}, {statusErr(408), true},
		{statusErr(403), false}, {statusErr(404), false}, {statusErr(400), false},
		{fmt.Errorf("get: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("%w: %w", errShort, io.EOF), true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, false},
		{context.DeadlineExceeded, true},
		{errors.New("invalid bucket name"), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestDelay: waits grow as Base·2^(n-1), capped by Max, drawn from zero
// up to that bound.
func TestDelay(t *testing.T) {
	r := Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}.withDefaults()
	for attempt, bound := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 80, 5: 100, 40: 100} {
		bound *= time.Millisecond
		var top time.Duration
		for range 200 {
			d := r.delay(attempt)
			if d < 0 || d > bound {
				t.Fatalf("delay(%d) = %v, outside [0, %v]", attempt, d, bound)
			}
			top = max(top, d)
		}
		if top < bound/2 {
			t.Errorf("delay(%d): 200 draws all below %v: no jitter up to %v", attempt, top, bound)
		}
	}
}
