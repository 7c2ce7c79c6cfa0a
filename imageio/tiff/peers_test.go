package tiff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// peerSamples is make_peers.py's peer_samples: a 120×70 image, RGB uint8
// (channels 3) or gray uint16 (channels 0).
func peerSamples(channels, bits int) nd.Array {
	const h, w = 120, 70
	c := max(channels, 1)
	v := make([]int, h*w*c)
	for y := range h {
		for x := range w {
			for k := range c {
				s := (x*7 + y*13 + k*29 + (x*x*3+y*y*5+k*11)%17) % 256
				if bits == 16 {
					s = s*257 + (x*y)%251
				}
				v[(y*w+x)*c+k] = s
			}
		}
	}
	shape := imageShape(1, h, w, channels)
	if bits == 8 {
		d := make([]uint8, len(v))
		for i, s := range v {
			d[i] = uint8(s)
		}
		return nd.Array{Shape: shape, Data: d}
	}
	d := make([]uint16, len(v))
	for i, s := range v {
		d[i] = uint16(s)
	}
	return nd.Array{Shape: shape, Data: d}
}

// TestReadPeerFiles reads the TIFFs OpenCV and PIL wrote
// (testdata/make_peers.py): LZW and Deflate, with OpenCV's predictor and
// strips and PIL's layout.
func TestReadPeerFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "peers", "*.tif"))
	if len(files) != 9 {
		t.Fatalf("%d files in testdata/peers, want 9 (make_peers.py)", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBytes(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		want, channels := peerSamples(0, 16), 0
		if strings.Contains(filepath.Base(f), "-rgb8-") {
			want, channels = peerSamples(3, 8), 3
		}
		if got.Channels != channels || !sameArray(got.Array, want) {
			t.Errorf("%s: read %v %v with %d channels, not the samples written", f, got.Array.Shape, got.Array.DType(), got.Channels)
		}
	}
}
