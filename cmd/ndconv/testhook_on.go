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

// testHookNote says "testhook: NOTE" on stderr: what the job did that the
// tests cannot see otherwise (a GPU prewarm started).
func testHookNote(note string) {
	fmt.Fprintln(os.Stderr, "testhook:", note)
}
