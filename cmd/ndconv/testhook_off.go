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

// testHookBankCPU reports whether a many-file run banks small files on the
// CPU as it does on a GPU (ndconv_testhook only: NDCONV_TESTHOOK_BANK_CPU),
// so that the banks are tested where no GPU is.
func testHookBankCPU() bool { return false }

// testHookDeviceBusy holds the device a while per bank (ndconv_testhook
// only, with NDCONV_TESTHOOK_BANK_CPU), so that files queue for it.
func testHookDeviceBusy() {}

func testHookBankFileMax(def int) int { return def }
