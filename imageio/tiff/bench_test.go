package tiff

import (
	"fmt"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// BenchmarkRead and BenchmarkWrite time a 1024×1024 RGB image of each
// dtype with each compression (predictor on).
func BenchmarkRead(b *testing.B) {
	for _, dt := range []nd.DType{nd.Uint8, nd.Uint16, nd.Float32} {
		for _, c := range compressions {
			img := Image{smoothArray(b, dt, 1024, 1024, 3), 3}
			file := writeBytes(b, img, Options{c, true})
			b.Run(fmt.Sprintf("%v/%v", dt, c), func(b *testing.B) {
				b.SetBytes(int64(img.Array.Len() * dt.Size()))
				for b.Loop() {
					if _, err := readBytes(file); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, dt := range []nd.DType{nd.Uint8, nd.Uint16, nd.Float32} {
		for _, c := range compressions {
			img := Image{smoothArray(b, dt, 1024, 1024, 3), 3}
			b.Run(fmt.Sprintf("%v/%v", dt, c), func(b *testing.B) {
				b.SetBytes(int64(img.Array.Len() * dt.Size()))
				for b.Loop() {
					writeBytes(b, img, Options{c, true})
				}
			})
		}
	}
}
