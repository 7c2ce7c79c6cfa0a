package chunk

import "testing"

// benchCopyBox copies box from srcAt in a 128³ float32 chunk into a block
// input of 132×260×260 at (2, 2, 2), as the chunk cache places a chunk.
func benchCopyBox(b *testing.B, box, srcAt []int) {
	src := make([]byte, 128*128*128*4)
	dst := make([]byte, 132*260*260*4)
	b.SetBytes(int64(box[0] * box[1] * box[2] * 4))
	for b.Loop() {
		CopyBox(dst, []int{132, 260, 260}, []int{2, 2, 2}, src, []int{128, 128, 128}, srcAt, box, 4)
	}
}

// BenchmarkCopyBoxFace2 copies a chunk's face across its last axis, two
// elements thick (a shell's, or a halo's columns).
func BenchmarkCopyBoxFace2(b *testing.B) { benchCopyBox(b, []int{128, 128, 2}, []int{0, 0, 126}) }

// BenchmarkCopyBoxRows copies a whole chunk: rows of 512 bytes.
func BenchmarkCopyBoxRows(b *testing.B) { benchCopyBox(b, []int{128, 128, 128}, []int{0, 0, 0}) }
