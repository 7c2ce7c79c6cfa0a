package jpeg

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fixture is one line of testdata/cases.txt (see testdata/gen.py).
type fixture struct {
	name, writer string
	quality      int
	sampling     string
	restart      int
}

func fixtures(t testing.TB) []fixture {
	f, err := os.Open("testdata/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixture
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		if len(p) != 5 {
			t.Fatalf("cases.txt: bad line %q", sc.Text())
		}
		q, _ := strconv.Atoi(p[2])
		r, _ := strconv.Atoi(p[4])
		out = append(out, fixture{p[0], p[1], q, p[3], r})
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

// readPNG reads a gray or RGB 8-bit PNG as an Image.
func readPNG(t testing.TB, path string) *Image {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bounds()
	img := &Image{Width: b.Dx(), Height: b.Dy()}
	switch m := m.(type) {
	case *image.Gray:
		img.Channels = 1
		for y := range img.Height {
			img.Pix = append(img.Pix, m.Pix[y*m.Stride:y*m.Stride+img.Width]...)
		}
	default:
		img.Channels = 3
		for y := range img.Height {
			for x := range img.Width {
				r, g, bb, _ := m.At(b.Min.X+x, b.Min.Y+y).RGBA()
				img.Pix = append(img.Pix, uint8(r>>8), uint8(g>>8), uint8(bb>>8))
			}
		}
	}
	return img
}

func sameImage(a, b *Image) error {
	if a.Width != b.Width || a.Height != b.Height || a.Channels != b.Channels {
		return fmt.Errorf("%dx%dx%d, want %dx%dx%d", a.Width, a.Height, a.Channels, b.Width, b.Height, b.Channels)
	}
	if !bytes.Equal(a.Pix, b.Pix) {
		n, first := 0, -1
		for i := range a.Pix {
			if a.Pix[i] != b.Pix[i] {
				if first < 0 {
					first = i
				}
				n++
			}
		}
		p := first / a.Channels
		return fmt.Errorf("%d samples differ, first at (y %d, x %d, c %d): %d, want %d", n, p/a.Width, p%a.Width, first%a.Channels, a.Pix[first], b.Pix[first])
	}
	return nil
}

// TestDecodeFixtures: Decode gives cv2.imdecode's samples, byte for byte,
// for every fixture: gray and RGB, odd sizes, qualities 1 to 100, smooth,
// noisy and saturated content, restart intervals, 4:2:0, 4:2:2, 4:4:4 and
// 4:4:0, and RGB files (Adobe transform 0, component ids R G B).
func TestDecodeFixtures(t *testing.T) {
	for _, fx := range fixtures(t) {
		data, err := os.ReadFile(filepath.Join("testdata", fx.name+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Errorf("%s: %v", fx.name, err)
			continue
		}
		want := readPNG(t, filepath.Join("testdata", fx.name+".want.png"))
		if err := sameImage(got, want); err != nil {
			t.Errorf("%s: %v", fx.name, err)
		}
	}
}
