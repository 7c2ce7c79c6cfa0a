package tiff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestRoundTripOddSizes writes and reads back uint8 and uint16 images of
// awkward sizes (one pixel, widths 1, 7 and 17, a last strip of one row)
// with every compression and predictor, random and smooth samples.
func TestRoundTripOddSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for _, dt := range []nd.DType{nd.Uint8, nd.Uint16, nd.Int16, nd.Float32} {
		for _, hw := range [][2]int{{1, 1}, {1, 7}, {5, 1}, {3, 17}, {2049, 7}, {1, 17}} {
			for _, channels := range []int{0, 3} {
				shape := imageShape(1, hw[0], hw[1], channels)
				for _, c := range compressions {
					for _, pred := range []bool{false, true} {
						name := fmt.Sprintf("%v/%v/c%d/%v/pred=%v", dt, shape, channels, c, pred)
						checkRoundTrip(t, name+"/random", Image{randArray(t, rng, dt, shape...), channels}, Options{c, pred})
						checkRoundTrip(t, name+"/smooth", Image{smoothArray(t, dt, shape...), channels}, Options{c, pred})
					}
				}
			}
		}
	}
}

// TestWriteSameOnAnyCores checks that an image of many strips, encoded on
// all cores, is the same file on one, two and eight, and reads back.
func TestWriteSameOnAnyCores(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	a := randArray(t, rng, nd.Uint16, 2, 1500, 17, 3) // two pages of 8 strips
	s := smoothArray(t, nd.Uint8, 3000, 100, 3)       // 3000 rows of 300 bytes: 14 strips
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, img := range []Image{{a, 3}, {s, 3}} {
		for _, c := range compressions {
			var want []byte
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				got := writeBytes(t, img, Options{c, true})
				if want == nil {
					want = got
					checkRoundTrip(t, fmt.Sprintf("%v %v", img.Array.Shape, c), img, Options{c, true})
				} else if !bytes.Equal(got, want) {
					t.Errorf("%v %v: %d bytes on %d cores, %d on one, or other bytes", img.Array.Shape, c, len(got), procs, len(want))
				}
			}
		}
	}
}
