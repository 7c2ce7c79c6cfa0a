package nifti

import (
	"bytes"
	"github.com/ndconv/ndconv/internal/fuzzcorpus"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are the inputs written to testdata/fuzz/FuzzRead by
// go test -run TestFuzzCorpus -update: nibabel fixtures, plain and
// gzipped, and a few broken files.
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for _, name := range []string{"u8_sform_qform.nii", "i16_be.nii", "i32_4d.nii.gz", "f32_2d_qform.nii",
		"u16_5d.nii.gz", "i16_scaled.nii", "u64_exact_be.nii.gz", "i16_extension.nii", "complex64.nii"} {
		b, err := os.ReadFile(filepath.Join("testdata/nibabel", name))
		if err != nil {
			t.Fatal(err)
		}
		seeds["seed-"+strings.NewReplacer(".nii", "", ".", "-").Replace(name)] = b
	}
	good := smallFile(t)
	seeds["seed-truncated"] = good[:len(good)-5]
	// From nibabel's gzip, not Go's, whose output may change with Go.
	gz := seeds["seed-i32_4d-gz"]
	seeds["seed-truncated-gz"] = gz[:len(gz)-12]
	seeds["seed-huge-claim"] = hugeClaim(t, 2000, 2000, 2000)
	seeds["seed-bad-vox-offset"] = patched(good, 108, float32(100))
	return seeds
}

// TestFuzzCorpus checks that the committed seed corpus is up to date (run
// with -update to rewrite it).
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, "FuzzRead", fuzzSeeds(t), *update)
}

// FuzzRead checks that no input makes Read panic, that errors are the
// package's typed errors, that reading with and without a known size
// agrees, and that whatever is read is written and read back unchanged:
// the same voxels, and writing the re-read volume gives the same bytes.
func FuzzRead(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, h, err := Read(bytes.NewReader(data))
		a2, _, err2 := Read(onlyReader{bytes.NewReader(data)})
		if (err == nil) != (err2 == nil) {
			t.Fatalf("known size: %v; unknown size: %v", err, err2)
		}
		if err != nil {
			for _, e := range []error{err, err2} {
				if c := errorClass(e); c != "format" && c != "unsupported" {
					t.Fatalf("untyped error %v (%T)", e, e)
				}
				if !strings.HasPrefix(e.Error(), "nifti: ") {
					t.Fatalf("error %q lacks the package prefix", e)
				}
			}
			return
		}
		if err := a.Check(); err != nil {
			t.Fatalf("read an invalid array: %v", err)
		}
		if !bytes.Equal(dataBytes(t, a), dataBytes(t, a2)) {
			t.Fatal("known and unknown size read different voxels")
		}
		var first, second bytes.Buffer
		if err := Write(&first, a, h); err != nil {
			t.Fatalf("Write: %v", err)
		}
		b, h2, err := Read(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if !bytes.Equal(dataBytes(t, a), dataBytes(t, b)) || b.DType() != a.DType() {
			t.Fatal("write and re-read changed the voxels")
		}
		if err := Write(&second, b, h2); err != nil {
			t.Fatalf("second Write: %v", err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatal("writing the re-read volume gave other bytes")
		}
	})
}
