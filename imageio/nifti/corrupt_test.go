package nifti

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// onlyReader hides the Len and Seek methods of a reader, so that Read
// cannot know its size.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// smallFile is a valid little-endian int16 volume of shape (3, 2, 2).
func smallFile(t testing.TB) []byte {
	a, _ := nd.FromSlice([]int16{1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}, 3, 2, 2)
	var buf bytes.Buffer
	if err := Write(&buf, a, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// patched returns a copy of b with v written little-endian at off.
func patched(b []byte, off int, v any) []byte {
	c := bytes.Clone(b)
	var w bytes.Buffer
	binary.Write(&w, binary.LittleEndian, v)
	copy(c[off:], w.Bytes())
	return c
}

// hugeClaim is a float64 volume of the given dims with 64 bytes of data.
func hugeClaim(t testing.TB, dims ...int16) []byte {
	var d [8]int16
	d[0] = int16(len(dims))
	copy(d[1:], dims)
	b := patched(patched(smallFile(t)[:dataOffset], 40, d), 70, int16(64))
	return append(b, make([]byte, 64)...)
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCorrupt feeds broken and unsupported files to Read, with the size
// known (a *bytes.Reader) and unknown (a plain io.Reader), and checks the
// class of the error and that no case allocates much.
func TestCorrupt(t *testing.T) {
	good := smallFile(t)
	f64 := patched(patched(good, 70, int16(64)), 72, int16(64))
	gz := gzipped(good)
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-8] ^= 0xff
	badDeflate := bytes.Clone(gz)
	for i := 12; i < 40; i++ {
		badDeflate[i] = 0xff
	}
	badGzipHeader := bytes.Clone(gz)
	badGzipHeader[2] = 9 // compression method other than deflate
	be := bytes.Clone(good[:HeaderSize])
	binary.BigEndian.PutUint32(be, 540)

	cases := []struct {
		name           string
		file           []byte
		known, unknown string // error class with the size known and unknown
	}{
		{"empty", nil, "format", "format"},
		{"1 byte", good[:1], "format", "format"},
		{"gzip magic only", []byte{0x1f, 0x8b}, "format", "format"},
		{"header cut", good[:200], "format", "format"},
		{"header 347", good[:347], "format", "format"},
		{"no extension flag", good[:HeaderSize], "format", "format"},
		{"data cut", good[:len(good)-1], "format", "format"},
		{"sizeof_hdr 349", patched(good, 0, int32(349)), "format", "format"},
		{"NIfTI-2", patched(good, 0, int32(540)), "unsupported", "unsupported"},
		{"NIfTI-2 big-endian", be, "unsupported", "unsupported"},
		{"pair", patched(good, 344, []byte("ni1\x00")), "unsupported", "unsupported"},
		{"ANALYZE", patched(good, 344, []byte{0, 0, 0, 0}), "unsupported", "unsupported"},
		{"bad magic", patched(good, 344, []byte("n+2\x00")), "format", "format"},
		{"dim0 0", patched(good, 40, int16(0)), "format", "format"},
		{"dim0 8", patched(good, 40, int16(8)), "format", "format"},
		{"dim0 -1", patched(good, 40, int16(-1)), "format", "format"},
		{"dim 0", patched(good, 44, int16(0)), "format", "format"},
		{"dim negative", patched(good, 42, int16(-3)), "format", "format"},
		{"datatype unknown", patched(good, 70, int16(3)), "format", "format"},
		{"datatype complex", patched(good, 70, int16(32)), "unsupported", "unsupported"},
		{"datatype RGBA", patched(good, 70, int16(2304)), "unsupported", "unsupported"},
		{"datatype binary", patched(good, 70, int16(1)), "unsupported", "unsupported"},
		{"vox_offset 0", patched(good, 108, float32(0)), "format", "format"},
		{"vox_offset 348", patched(good, 108, float32(348)), "format", "format"},
		{"vox_offset fraction", patched(good, 108, float32(352.5)), "format", "format"},
		{"vox_offset NaN", patched(good, 108, float32(math.NaN())), "format", "format"},
		{"vox_offset Inf", patched(good, 108, float32(math.Inf(1))), "format", "format"},
		{"vox_offset 1e20", patched(good, 108, float32(1e20)), "format", "format"},
		{"vox_offset past end", patched(good, 108, float32(1<<20)), "format", "format"},
		{"scl_inter NaN", patched(patched(good, 112, float32(2)), 116, float32(math.NaN())), "format", "format"},
		{"scl_inter Inf", patched(patched(good, 112, float32(2)), 116, float32(math.Inf(-1))), "format", "format"},
		{"data for int16, claims float64", f64, "format", "format"},
		{"huge claim", hugeClaim(t, 2000, 2000, 2000), "format", "format"},
		{"over MaxElements", hugeClaim(t, 32767, 32767, 32767, 32767, 32767, 32767, 32767), "format", "unsupported"},
		{"gzip truncated", gz[:len(gz)-20], "format", "format"},
		{"gzip trailer cut", gz[:len(gz)-4], "", ""},
		{"gzip bad checksum", badCRC, "format", "format"},
		{"gzip corrupt", badDeflate, "format", "format"},
		{"gzip bad header", badGzipHeader, "format", "format"},
		{"gzip huge claim", gzipped(hugeClaim(t, 2000, 2000, 2000)), "format", "format"},
		{"gzip over MaxElements", gzipped(hugeClaim(t, 32767, 32767, 32767, 32767, 32767, 32767, 32767)), "unsupported", "unsupported"},
	}
	for _, c := range cases {
		for _, known := range []bool{true, false} {
			var r io.Reader = bytes.NewReader(c.file)
			want := c.known
			if !known {
				r, want = onlyReader{r}, c.unknown
			}
			var err error
			if n := allocated(func() { _, _, err = Read(r) }); n > 1<<20 {
				t.Errorf("%s (size known %v): allocated %d bytes", c.name, known, n)
			}
			if got := errorClass(err); got != want {
				t.Errorf("%s (size known %v): error %v (%s), want %q", c.name, known, err, got, want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "nifti: ") {
				t.Errorf("%s: error %q lacks the package prefix", c.name, err)
			}
		}
	}
}

// TestHugeClaimFile checks that ReadFile refuses a small file that claims
// 64 GB before allocating it.
func TestHugeClaimFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.nii")
	if err := os.WriteFile(path, hugeClaim(t, 2000, 2000, 2000), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if n := allocated(func() { _, _, err = ReadFile(path) }); n > 1<<20 {
		t.Errorf("allocated %d bytes", n)
	}
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want a *FormatError naming the file", err)
	}
}

var errBroken = errors.New("broken pipe")

type failingReader struct {
	data []byte
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, errBroken
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

type failingWriter struct{ left int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, errBroken
	}
	f.left -= len(p)
	return len(p), nil
}

// TestIOErrors checks that errors of the reader or writer are passed on,
// wrapped, and not mistaken for bad files.
func TestIOErrors(t *testing.T) {
	good := smallFile(t)
	for _, n := range []int{0, 1, 100, HeaderSize, len(good) - 1} {
		for _, file := range [][]byte{good, gzipped(good)} {
			if n >= len(file) {
				continue
			}
			_, _, err := Read(&failingReader{data: file[:n]})
			if !errors.Is(err, errBroken) || errorClass(err) != "untyped" {
				t.Errorf("reader failing after %d bytes: %v", n, err)
			}
		}
	}
	a, _, err := Read(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100, dataOffset + 4} {
		if err := Write(&failingWriter{left: n}, a, nil); !errors.Is(err, errBroken) {
			t.Errorf("writer failing after %d bytes: %v", n, err)
		}
	}
}

// TestWriteRefuses checks the arrays and headers Write cannot store.
func TestWriteRefuses(t *testing.T) {
	long := NewHeader()
	long.Descrip = strings.Repeat("x", 81)
	cases := []struct {
		name string
		a    nd.Array
		h    *Header
	}{
		{"rank 0", nd.Array{Shape: []int{}, Data: []uint8{1}}, nil},
		{"rank 8", nd.Array{Shape: []int{1, 1, 1, 1, 1, 1, 1, 1}, Data: []uint8{1}}, nil},
		{"extent 40000", nd.Array{Shape: []int{40000}, Data: make([]uint8, 40000)}, nil},
		{"empty", nd.Array{Shape: []int{2, 0}, Data: []uint8{}}, nil},
		{"descrip 81 bytes", nd.Array{Shape: []int{1}, Data: []uint8{1}}, long},
	}
	for _, c := range cases {
		err := Write(io.Discard, c.a, c.h)
		if errorClass(err) != "unsupported" {
			t.Errorf("%s: %v, want an *UnsupportedError", c.name, err)
		}
	}
	if err := Write(io.Discard, nd.Array{Shape: []int{2}, Data: []nd.Half{1, 2}}, nil); err == nil {
		t.Error("float16 data accepted")
	}
	if err := Write(io.Discard, nd.Array{Shape: []int{3}, Data: []uint8{1, 2}}, nil); err == nil {
		t.Error("shape and data length disagree, accepted")
	}
}

// TestWriteFileAtomic checks that a failed WriteFile leaves neither a
// temporary file nor a changed target.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.nii.gz")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := NewHeader()
	long.IntentName = strings.Repeat("y", 17)
	a, _ := nd.FromSlice([]float32{1, 2, 3}, 3)
	if err := WriteFile(path, a, long); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want one naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Error("a failed write changed the target")
	}
	if err := WriteFile(path, a, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file: %v, mode %v; want the old mode 0600", err, fi.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want 1", len(entries))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x.nii"), a, nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
