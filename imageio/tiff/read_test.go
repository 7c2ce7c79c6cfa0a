package tiff

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	xtiff "golang.org/x/image/tiff"

	"github.com/ndconv/ndconv/nd"
)

// fixture is what testdata/make_tiff.py recorded for one reference file:
// the array it must decode to, or the error it must give.
type fixture struct {
	Shape    []int  `json:"shape"`
	DType    string `json:"dtype"`
	Channels int    `json:"channels"`
	SHA256   string `json:"sha256"`
	Error    string `json:"error"`    // "format" or "unsupported"
	Contains string `json:"contains"` // what the error message must say
}

func loadJSON[T any](t *testing.T, path string) map[string]T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]T{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// TestReadFixtures reads every file that tifffile and libtiff wrote
// (testdata/ref) and compares the arrays bit for bit with what those
// libraries decoded, under package tiff's dtype mapping.
func TestReadFixtures(t *testing.T) {
	fixtures := loadJSON[fixture](t, "testdata/fixtures.json")
	files, err := filepath.Glob("testdata/ref/*.tif")
	if err != nil || len(files) != len(fixtures) {
		t.Fatalf("testdata/ref holds %d files, fixtures.json lists %d (%v): rerun make_tiff.py", len(files), len(fixtures), err)
	}
	for name, want := range fixtures {
		t.Run(name, func(t *testing.T) {
			img, err := ReadFile(filepath.Join("testdata/ref", name))
			if want.Error != "" {
				checkTyped(t, err, want.Error, want.Contains)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := img.Array
			if err := a.Check(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Shape, want.Shape) || a.DType().String() != want.DType || img.Channels != want.Channels {
				t.Fatalf("read %v %v with %d channels, want %v %s with %d", a.Shape, a.DType(), img.Channels, want.Shape, want.DType, want.Channels)
			}
			if got := sha256Hex(a); got != want.SHA256 {
				t.Errorf("samples differ from the reference (SHA-256 %s, want %s); first values %v", got, want.SHA256, a.Float64s()[:min(a.Len(), 8)])
			}
		})
	}
}

// TestReadXImage compares, on the reference files that
// golang.org/x/image/tiff can decode (8 and 16-bit unsigned samples,
// contiguous planes; its first page), what it decodes with Read.
func TestReadXImage(t *testing.T) {
	files, err := filepath.Glob("testdata/ref/*.tif")
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, path := range files {
		name := filepath.Base(path)
		if strings.Contains(name, "-sep-") || strings.Contains(name, "subfiles") || strings.HasPrefix(name, "err-") {
			continue // x/image ignores PlanarConfiguration and NewSubfileType
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := xtiff.Decode(bytes.NewReader(b))
		if err != nil {
			continue
		}
		img, err := readBytes(b)
		if err != nil {
			t.Errorf("%s: x/image decodes it, Read fails: %v", name, err)
			continue
		}
		if dt := img.Array.DType(); dt != nd.Uint8 && dt != nd.Uint16 {
			continue
		}
		compared++
		checkAgainstImage(t, name, img, ref)
	}
	if compared < 10 {
		t.Errorf("compared %d files with x/image, expected at least 10", compared)
	}
}

// checkAgainstImage compares the first page of img with ref pixel by pixel.
func checkAgainstImage(t *testing.T, name string, img Image, ref image.Image) {
	t.Helper()
	a := img.Array
	c := max(img.Channels, 1)
	h, w := a.Shape[len(a.Shape)-2], a.Shape[len(a.Shape)-1]
	if img.Channels != 0 {
		h, w = a.Shape[len(a.Shape)-3], a.Shape[len(a.Shape)-2]
	}
	if ref.Bounds() != image.Rect(0, 0, w, h) {
		t.Errorf("%s: x/image bounds %v, Read %d×%d", name, ref.Bounds(), h, w)
		return
	}
	got := a.Float64s()
	for y := range h {
		for x := range w {
			want := imageSamples(ref.At(x, y))[:c]
			if pix := got[(y*w+x)*c : (y*w+x+1)*c]; !slices.Equal(pix, want) {
				t.Errorf("%s: pixel (%d, %d) is %v, x/image %v", name, x, y, pix, want)
				return
			}
		}
	}
}

// imageSamples lists a colour's stored samples: gray, or red, green, blue
// and alpha.
func imageSamples(c color.Color) []float64 {
	switch c := c.(type) {
	case color.Gray:
		return []float64{float64(c.Y)}
	case color.Gray16:
		return []float64{float64(c.Y)}
	case color.RGBA:
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	case color.NRGBA:
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	case color.RGBA64:
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	case color.NRGBA64:
		return []float64{float64(c.R), float64(c.G), float64(c.B), float64(c.A)}
	}
	panic("unexpected colour type")
}
