//go:build ndconv_testhook

package fileio

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

var announceWriting sync.Once

// testHookWriting makes the write slow, so that the CLI's signal tests can
// stop it while the temporary file exists: it says "testhook: writing" on
// stderr once, then pauses after every chunk until ctx is done (at most
// 10 s) — unless NDCONV_TESTHOOK_FAST_WRITE is set, for the tests that
// only read the announcements.
func testHookWriting(ctx context.Context) {
	announceWriting.Do(func() { fmt.Fprintln(os.Stderr, "testhook: writing") })
	if os.Getenv("NDCONV_TESTHOOK_FAST_WRITE") != "" {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
}
