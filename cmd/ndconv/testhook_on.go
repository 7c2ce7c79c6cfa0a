//go:build ndconv_testhook

package main

import (
	"fmt"
	"os"
	"time"
)

// testHookStage says "testhook: STAGE" on stderr and pauses briefly, so
// that the signal tests can stop the job in that stage.
func testHookStage(stage string) {
	fmt.Fprintln(os.Stderr, "testhook:", stage)
	time.Sleep(200 * time.Millisecond)
}
