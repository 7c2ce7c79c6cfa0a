package nifti

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// benchVolume is a 128³ volume of dt as a .nii file in memory.
func benchVolume(b *testing.B, dt nd.DType) (nd.Array, []byte) {
	a := randomArray(b, rand.New(rand.NewPCG(1, 2)), dt, []int{128, 128, 128})
	var buf bytes.Buffer
	if err := Write(&buf, a, nil); err != nil {
		b.Fatal(err)
	}
	return a, buf.Bytes()
}

func BenchmarkRead(b *testing.B) {
	for _, dt := range []nd.DType{nd.Int16, nd.Float32} {
		b.Run(dt.String(), func(b *testing.B) {
			_, file := benchVolume(b, dt)
			b.SetBytes(int64(len(file)))
			for b.Loop() {
				if _, _, err := Read(bytes.NewReader(file)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, dt := range []nd.DType{nd.Int16, nd.Float32} {
		b.Run(dt.String(), func(b *testing.B) {
			a, file := benchVolume(b, dt)
			b.SetBytes(int64(len(file)))
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := Write(&buf, a, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
