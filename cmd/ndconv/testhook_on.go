//go:build ndconv_testhook

package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ndconv/ndconv"
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

// testHookPanic panics at the stage NDCONV_TESTHOOK_PANIC names: the panic
// tests check that it becomes one line and leaves no file.
func testHookPanic(stage string) {
	if os.Getenv("NDCONV_TESTHOOK_PANIC") == stage {
		panic("injected panic at " + stage)
	}
}

// testHookProgress returns p, or with NDCONV_TESTHOOK_PANIC=worker a
// progress whose reports panic: the engine reports on its worker
// goroutines, so the panic happens where the CLI cannot recover it.
func testHookProgress(p ndconv.Progress) ndconv.Progress {
	if os.Getenv("NDCONV_TESTHOOK_PANIC") == "worker" {
		return panicProgress{}
	}
	return p
}

type panicProgress struct{}

func (panicProgress) Report(done, total int64) {
	panic(fmt.Sprintf("injected panic in a worker, report %d of %d", done, total))
}

// testHookCancelBlocks is NDCONV_TESTHOOK_CANCEL_BLOCKS: a run in blocks
// cancels itself after that many blocks are written, as a signal would,
// for the --resume tests. 0 (unset) never.
func testHookCancelBlocks() int {
	n, _ := strconv.Atoi(os.Getenv("NDCONV_TESTHOOK_CANCEL_BLOCKS"))
	return n
}

// testHookBankCPU: NDCONV_TESTHOOK_BANK_CPU=1 banks small files on the CPU
// as on a GPU.
func testHookBankCPU() bool { return os.Getenv("NDCONV_TESTHOOK_BANK_CPU") == "1" }

// testHookDeviceBusy: with NDCONV_TESTHOOK_BANK_CPU=1, each bank (or file
// alone) holds the device 100 ms, as a slow GPU would, so that the files
// read meanwhile queue for it and form banks.
func testHookDeviceBusy() {
	if testHookBankCPU() {
		time.Sleep(100 * time.Millisecond)
	}
}

// testHookBankFileMax is NDCONV_TESTHOOK_BANK_FILE_MAX (bytes) where set:
// files above it run alone on the "device" instead of in banks.
func testHookBankFileMax(def int) int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_TESTHOOK_BANK_FILE_MAX")); err == nil {
		return n
	}
	return def
}
