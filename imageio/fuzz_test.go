package imageio

import (
	"bytes"
	"errors"
	"github.com/ndconv/ndconv/internal/fuzzcorpus"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzCorpora are the seed inputs of each fuzz target, written to
// testdata/fuzz/<target> by go test -run TestFuzzCorpus -update: valid files
// of several kinds and a few broken ones.
var fuzzCorpora = map[string]func(testing.TB) map[string][]byte{
	"FuzzReadNPY":  npySeeds,
	"FuzzReadPNG":  pngSeeds,
	"FuzzReadJPEG": jpegSeeds,
}

func npySeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for _, name := range []string{"u1.npy", "f4.npy", "be_i2.npy", "fortran_i2_3d.npy", "v2_f4.npy", "v3_i4.npy", "f4_0d.npy", "f8_empty.npy", "c16.npy", "struct.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata/npy", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds["seed-"+strings.TrimSuffix(name, ".npy")] = b
	}
	header := "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3), }\n"
	seeds["seed-truncated"] = npyBytes(1, header, make([]byte, 7))
	seeds["seed-huge-claim"] = npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (8589934592,), }\n", make([]byte, 64))
	seeds["seed-bad-dict"] = npyBytes(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, -3,), }\n", nil)
	seeds["seed-nested"] = npyBytes(2, "{'descr': [('a', '<f4'), ('b', [('c', '<i2')])], 'fortran_order': False, 'shape': (1,), }\n", make([]byte, 6))
	return seeds
}

// TestFuzzCorpus checks that the committed seed corpus is up to date (run
// with -update to rewrite it).
func TestFuzzCorpus(t *testing.T) {
	for target, seeds := range fuzzCorpora {
		fuzzcorpus.Check(t, target, seeds(t), *update)
	}
}

// FuzzReadNPY checks that no input makes ReadNPY panic, that reading with
// and without a known size agrees, that errors are the package's typed
// errors, and that whatever is read is written and read back unchanged.
func FuzzReadNPY(f *testing.F) {
	for _, b := range npySeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadNPY(bytes.NewReader(data))
		a2, err2 := ReadNPY(onlyReader{bytes.NewReader(data)})
		if (err == nil) != (err2 == nil) {
			t.Fatalf("known size: %v; unknown size: %v", err, err2)
		}
		if err != nil {
			var fe *FormatError
			var ue *UnsupportedError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("untyped error %v (%T)", err, err)
			}
			if !strings.HasPrefix(err.Error(), "imageio: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			return
		}
		if err := a.Check(); err != nil {
			t.Fatalf("read an invalid array: %v", err)
		}
		if !sameArray(a, a2) {
			t.Fatal("known and unknown size read different arrays")
		}
		var buf bytes.Buffer
		if err := WriteNPY(&buf, a); err != nil {
			t.Fatalf("WriteNPY: %v", err)
		}
		b, err := ReadNPY(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if !sameArray(a, b) {
			t.Fatal("write and re-read changed the array")
		}
	})
}
