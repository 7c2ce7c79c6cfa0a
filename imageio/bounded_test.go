package imageio

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ndconv/ndconv/imageio/nifti"
	"github.com/ndconv/ndconv/nd"
)

// endless is a stream that never ends: prefix, then pattern over and over.
// It counts what it hands out and gives up (errEndless) after endlessCap
// bytes, so that a reader that reads a stream whole fails the test instead
// of filling memory.
type endless struct {
	prefix, pattern []byte
	read            int64
}

const endlessCap = 256 << 20

var errEndless = errors.New("the endless stream was read past its cap")

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= endlessCap {
		return 0, errEndless
	}
	p = p[:min(int64(len(p)), endlessCap-e.read)]
	n := 0
	for n < len(p) {
		if pos := e.read + int64(n); pos < int64(len(e.prefix)) {
			n += copy(p[n:], e.prefix[pos:])
			continue
		}
		off := (e.read + int64(n) - int64(len(e.prefix))) % int64(len(e.pattern))
		n += copy(p[n:], e.pattern[off:])
	}
	e.read += int64(n)
	return n, nil
}

// decodeWithin decodes from r as name's format, failing the test if that
// takes more than a few seconds (a reader that does not stop at its cap
// would hang).
func decodeWithin(t *testing.T, name string, r io.Reader) (nd.Array, error) {
	t.Helper()
	type result struct {
		a   nd.Array
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, _, err := Decode(name, r)
		done <- result{a, err}
	}()
	select {
	case res := <-done:
		return res.a, res.err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still reading after 20 s", name)
		return nd.Array{}, nil
	}
}

// TestBoundedBadSignature: a stream that never ends and is not of the
// format (zeros, 0xff, text, bytes of no pattern) is refused after its
// first bytes, for every format that decodes a stream.
func TestBoundedBadSignature(t *testing.T) {
	patterns := map[string][]byte{
		"zeros": {0},
		"ff":    {0xff},
		"text":  []byte("not an image, "),
		"noise": []byte("\x1f\x8b\x89PNG\xff\xd8MM\x00*\x93NUMPY\x5c\x01"),
	}
	for _, name := range []string{"x.png", "x.jpg", "x.tif", "x.npy", "x.nii", "x.nii.gz"} {
		for pname, pattern := range patterns {
			e := &endless{pattern: pattern}
			_, err := decodeWithin(t, name, e)
			if err == nil || errors.Is(err, errEndless) {
				t.Errorf("%s of %s: %v, want a refusal", name, pname, err)
			}
			if e.read > 1<<20 {
				t.Errorf("%s of %s: read %d bytes before refusing (%v)", name, pname, e.read, err)
			}
		}
	}
}

// pngChunk is one PNG chunk with its CRC.
func pngChunk(kind string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(kind)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	return b.Bytes()
}

// TestBoundedHeaderLimit: a valid header followed by a body that never
// ends is refused having read no more than the image it announces can
// take (or, for .npy, read exactly what it announces).
func TestBoundedHeaderLimit(t *testing.T) {
	head := pngWithIHDR(2048, 2048, 8, pngGray)
	head = head[:33] // signature and IHDR: 4 MiB of 8-bit gray
	idat := pngChunk("IDAT", make([]byte, 64<<10))
	photo, err := os.ReadFile("testdata/png/photo.jpg") // 24×16
	if err != nil {
		t.Fatal(err)
	}
	defer func(old int64) { maxStreamTIFF = old }(maxStreamTIFF)
	maxStreamTIFF = 4 << 20
	for _, tc := range []struct {
		name, file string
		stream     *endless
		limit      int64  // the most it may read
		msg        string // in the error
	}{
		{"png zeros after IHDR", "x.png", &endless{prefix: head, pattern: []byte{0}}, 64, "chunk type"},
		{"png endless IDAT", "x.png", &endless{prefix: head, pattern: idat}, 6 << 20, "IDAT"},
		{"png endless text", "x.png", &endless{prefix: head, pattern: pngChunk("tEXt", make([]byte, 1<<20))}, pngMaxOtherChunks + 2<<20, "besides the image data"},
		{"jpeg endless body", "x.jpg", &endless{prefix: photo[:len(photo)-2], pattern: []byte{0}}, 2 << 20, "holds more than"},
		{"tiff endless body", "x.tif", &endless{prefix: []byte("II*\x00\x08\x00\x00\x00"), pattern: []byte{0}}, 5 << 20, "regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeWithin(t, tc.file, tc.stream)
			if err == nil || errors.Is(err, errEndless) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%v, want a refusal saying %q", err, tc.msg)
			}
			if tc.stream.read > tc.limit {
				t.Errorf("read %d bytes, want at most %d", tc.stream.read, tc.limit)
			}
		})
	}
	// A .npy reads what its header announces and stops there.
	npy := npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (262144,), }", nil)
	e := &endless{prefix: npy, pattern: []byte{0}}
	a, err := decodeWithin(t, "x.npy", e)
	if err != nil || a.Len() != 1<<18 || e.read > int64(len(npy))+1<<20+64<<10 {
		t.Errorf(".npy on an endless body: %v %v, read %d bytes", a.Shape, err, e.read)
	}
}

// endlessGzip is a gzip member whose data are prefix and then zeros that
// never end: a gzip bomb of no size at all. The zeros are one deflate
// block of 1 MiB repeated, which is valid after the 32 KiB of zeros that
// prefix ends with, whatever the block refers back to.
func endlessGzip(t *testing.T, prefix []byte) *endless {
	t.Helper()
	var out bytes.Buffer
	out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}) // gzip header, no name
	w, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(prefix)
	w.Write(make([]byte, 32<<10))
	w.Flush()
	start := out.Len()
	w.Write(make([]byte, 1<<20))
	w.Flush()
	block := bytes.Clone(out.Bytes()[start:])
	return &endless{prefix: out.Bytes()[:start], pattern: block}
}

// TestBoundedGzipBomb: a .nii.gz whose header announces a modest volume
// and whose data inflate without end stops at the volume's size.
func TestBoundedGzipBomb(t *testing.T) {
	vol, err := nd.New(nd.Uint8, 64, 64, 16)
	if err != nil {
		t.Fatal(err)
	}
	var nii bytes.Buffer
	if err := nifti.Write(&nii, vol, nil); err != nil {
		t.Fatal(err)
	}
	bomb := endlessGzip(t, nii.Bytes())
	// Check that the bomb inflates as meant: its first 8 MiB are the file
	// and zeros.
	zr, err := gzip.NewReader(&endless{prefix: bomb.prefix, pattern: bomb.pattern})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8<<20)
	if _, err := io.ReadFull(zr, got); err != nil || !bytes.Equal(got[:nii.Len()], nii.Bytes()) || bytes.ContainsFunc(got[nii.Len():], func(r rune) bool { return r != 0 }) {
		t.Fatalf("the bomb does not inflate to the file and zeros: %v", err)
	}
	a, err := decodeWithin(t, "x.nii.gz", bomb)
	if err != nil || a.Len() != vol.Len() {
		t.Fatalf("%v %v", a.Shape, err)
	}
	if bomb.read > 64<<10 {
		t.Errorf("read %d compressed bytes for a %d-byte volume", bomb.read, vol.Len())
	}
}

// TestRawDevice: a .raw that is a device or a FIFO is read up to what its
// shape needs, and refused if it holds more or less, in one line that says
// what it is.
func TestRawDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	_, err := ReadRawFile("/dev/zero", RawOptions{Shape: []int{64, 64}, DType: nd.Float32})
	if err == nil || !strings.Contains(err.Error(), "character device holds more than the 16384 bytes") {
		t.Errorf("/dev/zero as a .raw: %v", err)
	}
}
