//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestRawFromPipe: a .raw input that is a named pipe is read as a stream
// of exactly the bytes --shape and --input-dtype imply, giving the same
// output as the file; a pipe that ends early, or gives more, and a device
// (/dev/zero) are one line saying what the input is and how many bytes it
// gave. It said "the file has 0 bytes".
func TestRawFromPipe(t *testing.T) {
	dir := t.TempDir()
	a := ramp(nd.Uint16, 40, 30)
	data := a.Bytes()
	os.WriteFile(filepath.Join(dir, "file.raw"), data, 0o644)
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	args := func(in, out string) []string {
		return []string{"correlate", "-q", "-k", "k.csv", "--shape", "40,30", "--input-dtype", "uint16", in, out}
	}
	if code, _, stderr := ndconvCLI(t, dir, args("file.raw", "want.npy")...); code != 0 {
		t.Fatal(stderr)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "want.npy"))
	pipe := filepath.Join(dir, "pipe.raw")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	for _, c := range []struct {
		name  string
		write []byte
		want  string // "" for success
	}{
		{"exact", data, ""},
		{"short", data[:1001], "a named pipe that ended after 1001 bytes; shape [40 30] of uint16 needs 2400"},
		{"empty", nil, "a named pipe that ended after 0 bytes"},
		{"long", append(append([]byte(nil), data...), 7), "a named pipe with more than the 2400 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			go func() {
				f, err := os.OpenFile(pipe, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				f.Write(c.write) // the reader may stop early: EPIPE is fine
				f.Close()
			}()
			code, _, stderr := ndconvCLI(t, dir, args("pipe.raw", "out.npy")...)
			if c.want == "" {
				got, _ := os.ReadFile(filepath.Join(dir, "out.npy"))
				if code != 0 || !bytes.Equal(got, want) {
					t.Errorf("exit %d (%s); output equals the file's: %v", code, stderr, bytes.Equal(got, want))
				}
				os.Remove(filepath.Join(dir, "out.npy"))
				return
			}
			if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 1 and one line naming %q", code, stderr, c.want)
			}
			assertNoOutput(t, dir, "out.npy")
		})
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.raw")); err == nil {
		code, _, stderr := ndconvCLI(t, dir, args("zero.raw", "out.npy")...)
		if code != 1 || !strings.Contains(stderr, "a device with more than the 2400 bytes") {
			t.Errorf("/dev/zero: exit %d, stderr %q", code, stderr)
		}
		assertNoOutput(t, dir, "out.npy")
	}
}
