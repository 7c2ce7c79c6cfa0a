package fileio

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomicContextStops: a context cancelled in the middle of a
// write, or before the rename, leaves no file and returns the cause; an
// uncancelled one writes the whole file.
func TestWriteAtomicContextStops(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.bin")
	data := make([]byte, 3*writeChunk+5)
	stop := errors.New("stop")

	ctx, cancel := context.WithCancelCause(context.Background())
	err := WriteAtomicContext(ctx, path, func(w io.Writer) error {
		if _, err := w.Write(data[:10]); err != nil {
			return err
		}
		cancel(stop)
		_, err := w.Write(data)
		return err
	})
	if !errors.Is(err, stop) {
		t.Errorf("cancelled mid-write: err %v, want the cause", err)
	}
	ctx, cancel = context.WithCancelCause(context.Background())
	err = WriteAtomicContext(ctx, path, func(w io.Writer) error {
		_, err := w.Write(data)
		cancel(stop)
		return err
	})
	if !errors.Is(err, stop) {
		t.Errorf("cancelled before the rename: err %v, want the cause", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}

	if err := WriteAtomicContext(context.Background(), path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(data)) {
		t.Errorf("written file: %v, %v", fi, err)
	}
}
