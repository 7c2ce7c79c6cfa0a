package chunk

import "testing"

func benchCopyBox(b *testing.B, box []int) {
	src := make([]byte, 128*128*128*4)
	dst := make([]byte, 132*260*260*4)
	b.SetBytes(int64(box[0] * box[1] * box[2] * 4))
	for b.Loop() {
		CopyBox(dst, []int{132, 260, 260}, []int{2, 2, 2}, src, []int{128, 128, 128}, []int{0, 0, 126}, box, 4)
	}
}

func BenchmarkCopyBoxFace2(b *testing.B) { benchCopyBox(b, []int{128, 128, 2}) }
func BenchmarkCopyBoxRows(b *testing.B)  { benchCopyBoxAt(b, []int{128, 128, 128}) }

func benchCopyBoxAt(b *testing.B, box []int) {
	src := make([]byte, 128*128*128*4)
	dst := make([]byte, 132*260*260*4)
	b.SetBytes(int64(box[0] * box[1] * box[2] * 4))
	for b.Loop() {
		CopyBox(dst, []int{132, 260, 260}, []int{2, 2, 2}, src, []int{128, 128, 128}, []int{0, 0, 0}, box, 4)
	}
}
