package imageio

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ndconv/ndconv/imageio/internal/fileio"
)

// Reading is bounded: every decoder reads its signature and header first,
// refusing a file that is not of its format before reading further, and
// reads the rest only up to a limit the header gives (the most a file of
// the image it announces can hold), so that a stream or a device named as
// a file (a FIFO, /dev/zero, /dev/urandom) is refused with bounded memory
// and time instead of being read until memory runs out.

// maxStreamTIFF bounds a TIFF read from a stream, whose size no header
// gives: a TIFF is read at offsets anywhere in the file, so a stream is
// read into memory first. Larger TIFFs are read from regular files, at
// their offsets. A variable so that tests can lower it.
var maxStreamTIFF int64 = 1 << 30

// readHead reads the n bytes of a format's signature and header. A file
// shorter than that is a *FormatError saying what it is not (msg).
func readHead(r io.Reader, n int, format, msg string) ([]byte, error) {
	head := make([]byte, n)
	if k, err := io.ReadFull(r, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return head[:k], &FormatError{Format: format, Msg: msg, Err: io.ErrUnexpectedEOF}
		}
		return nil, err
	}
	return head, nil
}

// readRest appends the rest of r to head, reading at most limit bytes in
// all (head included); a longer file is refused with a *FormatError that
// says what the limit comes from (why). Where r says how much it holds
// (fileio.Remaining) that is checked first and read in one piece;
// otherwise r is read in pieces that grow with what arrives.
func readRest(r io.Reader, head []byte, limit int64, format, why string) ([]byte, error) {
	tooLong := func() error {
		return &FormatError{Format: format, Msg: fmt.Sprintf("the file holds more than the %d bytes %s", limit, why)}
	}
	remain, known, err := fileio.Remaining(r)
	if err != nil {
		return nil, err
	}
	if known {
		if remain > limit-int64(len(head)) {
			return nil, tooLong()
		}
		data := make([]byte, len(head)+int(remain))
		copy(data, head)
		n, err := io.ReadFull(r, data[len(head):])
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		return data[:len(head)+n], nil
	}
	buf := bytes.NewBuffer(head)
	if _, err := buf.ReadFrom(io.LimitReader(r, limit-int64(len(head))+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, tooLong()
	}
	return buf.Bytes(), nil
}
