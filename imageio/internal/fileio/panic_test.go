package fileio

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomicPanicLeavesNothing: a panic in the write callback goes on
// up, and neither the output nor the temporary file is left behind.
func TestWriteAtomicPanicLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	func() {
		defer func() {
			if r := recover(); r != "encoder bug" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		WriteAtomic(filepath.Join(dir, "out.bin"), func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("encoder bug")
		})
	}()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
