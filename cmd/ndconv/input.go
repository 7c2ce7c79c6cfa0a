package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// readFile is imageio.ReadFile, except that a .raw input that is a named
// pipe or a character device is read as a stream (readRawStream): its
// size, which a file's must match, is not known before it is read.
func readFile(path string, raw imageio.RawOptions) (ndconv.Array, imageio.Meta, error) {
	if strings.EqualFold(filepath.Ext(path), ".raw") && len(raw.Shape) > 0 && raw.DType.Valid() {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
			a, err := readRawStream(path, raw, fi.Mode())
			if err != nil {
				return ndconv.Array{}, imageio.Meta{}, fmt.Errorf("read %s: %w", path, err)
			}
			return a, imageio.Meta{}, nil
		}
	}
	return imageio.ReadFile(path, raw)
}

// rawStreamPiece is how much of a streamed .raw input is read before the
// whole array is allocated: a stream that ends early costs at most this.
const rawStreamPiece = 1 << 20

// readRawStream reads a .raw input from a named pipe or a device: exactly
// the bytes --shape and --input-dtype imply, then the end. Memory is
// bounded by the array, as for a file, and a stream that ends early holds
// at most rawStreamPiece; a shorter or a longer stream is an error saying
// what it is and how many bytes it gave (a stat of a pipe says 0 bytes,
// which is why imageio's size check cannot apply).
func readRawStream(path string, raw imageio.RawOptions, mode fs.FileMode) (ndconv.Array, error) {
	what := "device"
	if mode&fs.ModeNamedPipe != 0 {
		what = "named pipe"
	}
	n, err := nd.NumElements(raw.Shape)
	if err != nil {
		return ndconv.Array{}, err
	}
	want := int64(n) * int64(raw.DType.Size())
	f, err := os.Open(path)
	if err != nil {
		return ndconv.Array{}, err
	}
	defer f.Close()
	short := func(got int64) error {
		return &imageio.FormatError{Format: ".raw", Msg: fmt.Sprintf("a %s that ended after %d bytes; shape %v of %v needs %d", what, got, raw.Shape, raw.DType, want)}
	}
	buf := make([]byte, min(want, rawStreamPiece))
	k, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return ndconv.Array{}, err
	}
	if int64(k) < int64(len(buf)) {
		return ndconv.Array{}, short(int64(k))
	}
	if want > int64(len(buf)) {
		whole := make([]byte, want)
		copy(whole, buf)
		k, err := io.ReadFull(f, whole[len(buf):])
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return ndconv.Array{}, err
		}
		if got := int64(len(buf) + k); got < want {
			return ndconv.Array{}, short(got)
		}
		buf = whole
	}
	var one [1]byte
	if k, _ := f.Read(one[:]); k > 0 {
		return ndconv.Array{}, &imageio.FormatError{Format: ".raw", Msg: fmt.Sprintf("a %s with more than the %d bytes shape %v of %v needs", what, want, raw.Shape, raw.DType)}
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		// .raw data are little-endian: swap each value (each part of a
		// complex one) on a big-endian machine.
		size := raw.DType.Size()
		if raw.DType.IsComplex() {
			size /= 2
		}
		for i := 0; i+size <= len(buf); i += size {
			for a, b := i, i+size-1; a < b; a, b = a+1, b-1 {
				buf[a], buf[b] = buf[b], buf[a]
			}
		}
	}
	return ndconv.Array{Shape: append([]int(nil), raw.Shape...), Data: nd.ViewBytes(raw.DType, buf)}, nil
}
