//go:build unix

package imageio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ndconv/ndconv/nd"
)

// TestReadFileFIFO names a FIFO as an input of every format, fed by a
// writer of bytes that are not the format, up to a cap (as a symlink to
// /dev/urandom or /dev/zero would feed it without one): ReadFile refuses
// it in one line having taken no more than the pipe's buffer and a header.
func TestReadFileFIFO(t *testing.T) {
	const writeCap = 64 << 20
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		pattern []byte
		raw     RawOptions
		msg     string
	}{
		{"rnd.png", []byte("\x17\xa9\x03\xee\x5c"), RawOptions{}, "not a PNG file"},
		{"zero.png", []byte{0}, RawOptions{}, "not a PNG file"},
		{"zero.jpg", []byte{0}, RawOptions{}, "not a JPEG file"},
		{"rnd.jpeg", []byte("\xff\xd9\x01"), RawOptions{}, "not a JPEG file"},
		{"zero.tif", []byte{0}, RawOptions{}, "not a TIFF file"},
		{"zero.npy", []byte{0}, RawOptions{}, "not a .npy file"},
		{"zero.nii", []byte{0}, RawOptions{}, "not a NIfTI-1 file"},
		{"zero.nii.gz", []byte{0}, RawOptions{}, "not a NIfTI-1 file"},
		{"zero.raw", []byte{0}, RawOptions{Shape: []int{64, 64}, DType: nd.Float32}, "FIFO holds more than the 16384 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := unix.Mkfifo(path, 0o600); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
			written := make(chan int, 1)
			go func() {
				n := 0
				defer func() { written <- n }()
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer f.Close()
				block := bytes.Repeat(tc.pattern, 64<<10/len(tc.pattern))
				for n < writeCap {
					k, err := f.Write(block)
					n += k
					if err != nil {
						return // the reader closed its end: EPIPE
					}
				}
			}()
			done := make(chan error, 1)
			go func() {
				_, _, err := ReadFile(path, tc.raw)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("still reading after 20 s")
			}
			// Release a writer still waiting for a reader to open the FIFO.
			if r, rerr := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); rerr == nil {
				r.Close()
			}
			n := <-written
			if err == nil || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line saying %q", err, tc.msg)
			}
			var pathErr *os.PathError
			if errors.As(err, &pathErr) {
				t.Errorf("an I/O error, not a refusal: %v", err)
			}
			// The pipe's buffer (64 KiB on Linux, up to 1 MiB where raised)
			// and what the reader took.
			if n > 2<<20 {
				t.Errorf("the reader took %d bytes before refusing", n)
			}
		})
	}
}
