//go:build !ndconv_testhook

package main

import "github.com/ndconv/ndconv"

// testHookStage marks the start of a stage of a filter job; only binaries
// built with the ndconv_testhook tag (the signal tests) do anything there.
func testHookStage(string) {}

// testHookNote reports a step the tests check for (ndconv_testhook only).
func testHookNote(string) {}

// testHookPanic panics where the tests ask (ndconv_testhook only).
func testHookPanic(string) {}

// testHookProgress returns p (ndconv_testhook: one that panics, on asking).
func testHookProgress(p ndconv.Progress) ndconv.Progress { return p }

// testHookCancelBlocks is the blocks after which a run in blocks cancels
// itself (ndconv_testhook only: NDCONV_TESTHOOK_CANCEL_BLOCKS); 0 never.
func testHookCancelBlocks() int { return 0 }
