//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// feedPipe writes data to the named pipe at path once a reader opens it.
func feedPipe(path string, data []byte) {
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data) // the reader may stop early: EPIPE is fine
		f.Close()
	}()
}

// TestRawFromPipe runs the CLI on a .raw input that is a named pipe: of
// exactly the bytes --shape and --input-dtype imply it gives the file's
// output; one that ends early or gives more, and a device (/dev/zero), are
// one line (exit 1) and no output. It said "the file has 0 bytes"; reading
// a stream is imageio.ReadRawFile's (issue 34's bounded reads), so where
// imageio cannot yet the test says so and skips.
func TestRawFromPipe(t *testing.T) {
	dir := t.TempDir()
	a := ramp(nd.Uint16, 40, 30)
	data := a.Bytes()
	os.WriteFile(filepath.Join(dir, "file.raw"), data, 0o644)
	writeText(t, filepath.Join(dir, "k.csv"), "1,2,1\n2,4,2\n1,2,1\n")
	pipe := filepath.Join(dir, "pipe.raw")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	feedPipe(pipe, data)
	if _, err := imageio.ReadRawFile(pipe, imageio.RawOptions{Shape: a.Shape, DType: a.DType()}); err != nil {
		t.Skipf("imageio reads no .raw stream here (%v)", err)
	}
	args := func(in, out string) []string {
		return []string{"correlate", "-q", "-k", "k.csv", "--shape", "40,30", "--input-dtype", "uint16", in, out}
	}
	if code, _, stderr := ndconvCLI(t, dir, args("file.raw", "want.npy")...); code != 0 {
		t.Fatal(stderr)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "want.npy"))
	for _, c := range []struct {
		name  string
		write []byte
		ok    bool
	}{
		{"exact", data, true},
		{"short", data[:1001], false},
		{"empty", nil, false},
		{"long", append(append([]byte(nil), data...), 7), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			feedPipe(pipe, c.write)
			code, _, stderr := ndconvCLI(t, dir, args("pipe.raw", "out.npy")...)
			if c.ok {
				got, _ := os.ReadFile(filepath.Join(dir, "out.npy"))
				if code != 0 || !bytes.Equal(got, want) {
					t.Errorf("exit %d (%s); output equals the file's: %v", code, stderr, bytes.Equal(got, want))
				}
				os.Remove(filepath.Join(dir, "out.npy"))
				return
			}
			if code != 1 || !strings.Contains(stderr, "2400 bytes") || strings.Contains(stderr, "the file has 0 bytes") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 1 and one line naming the 2400 bytes needed", code, stderr)
			}
			assertNoOutput(t, dir, "out.npy")
		})
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.raw")); err == nil {
		code, _, stderr := ndconvCLI(t, dir, args("zero.raw", "out.npy")...)
		if code != 1 || !strings.Contains(stderr, "2400 bytes") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("/dev/zero: exit %d, stderr %q", code, stderr)
		}
		assertNoOutput(t, dir, "out.npy")
	}
}
