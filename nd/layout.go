package nd

import (
	"fmt"
	"slices"
	"unsafe"
)

// BankLayout is where a filter bank's kernel axis lies in its output. The
// zero value is Interleaved, the layout every engine writes.
type BankLayout uint8

const (
	// Interleaved: one trailing axis of length K, shape (…, K), in memory
	// out[voxel*K + k] (the seed-000 layout).
	Interleaved BankLayout = iota
	// Planar: one leading axis of length K, shape (K, …), in memory
	// out[k*N + voxel] for N voxels: one plane per kernel, as cuDNN's and
	// PyTorch's NCHW outputs are.
	Planar
)

var bankLayoutNames = [...]string{"interleaved", "planar"}

func (l BankLayout) String() string { return EnumName(bankLayoutNames[:], l, "BankLayout") }

// Valid reports whether l is one of the layouts.
func (l BankLayout) Valid() bool { return int(l) < len(bankLayoutNames) }

// ParseBankLayout accepts interleaved and planar (ignoring case and
// surrounding space), or returns an UnsupportedError naming them.
func ParseBankLayout(s string) (BankLayout, error) {
	return ParseEnum[BankLayout](bankLayoutNames[:], s, "bank layout")
}

// PlanarShape returns an interleaved bank output's shape (…, K) with its
// trailing axis moved to the front: (K, …).
func PlanarShape(interleaved []int) []int {
	if len(interleaved) == 0 {
		return nil
	}
	k := len(interleaved) - 1
	return append([]int{interleaved[k]}, interleaved[:k]...)
}

// IsPlanarShape reports whether shape is PlanarShape(spatial + (bank,))
// without building it.
func IsPlanarShape(shape, spatial []int, bank int) bool {
	return len(shape) == len(spatial)+1 && shape[0] == bank && slices.Equal(shape[1:], spatial)
}

// transposeTile is the side of ToPlanar's tiles, in elements: a tile of
// 64 voxels × up to 64 kernels of 8 bytes reads and writes 32 KiB each,
// within a core's L1 and L2 for float32 and smaller.
const transposeTile = 64

// transposeItem is the voxels one goroutine of ToPlanar takes at a time.
const transposeItem = 1 << 14

// ToPlanar moves src, an interleaved bank output of bank kernels
// (src[v*bank + k] for every voxel v), into dst in the planar layout
// (dst[k*n + v], n = src's elements / bank), on up to workers goroutines
// (0: one). Both must be of one element type and length, and must not
// overlap; otherwise it returns an ArgumentError and moves nothing. It is
// the one place that makes a planar bank output: every engine writes
// interleaved, and the plan transposes. The tiles (transposeTile voxels ×
// kernels) read and write whole cache lines, where a plain loop over one
// side walks the other at stride bank or n. The loop is pure Go, one for
// every type through its element size.
func ToPlanar(dst, src Array, bank, workers int) error {
	return moveBank(dst, src, bank, workers, true)
}

// FromPlanar is ToPlanar's inverse: it moves src, a planar bank output
// (src[k*n + v]), into dst interleaved (dst[v*bank + k]), with the same
// checks and tiles. An engine whose passes write a kernel at a time
// (cpu's separable method) writes planes and interleaves them here, where
// stores at stride bank would cost it several times its sums.
func FromPlanar(dst, src Array, bank, workers int) error {
	return moveBank(dst, src, bank, workers, false)
}

// moveBank is ToPlanar (toPlanar) and FromPlanar: src's and dst's roles
// in the checks and messages are the interleaved and planar outputs'.
func moveBank(dst, src Array, bank, workers int, toPlanar bool) error {
	d, s := dst.Bytes(), src.Bytes()
	size := src.DType().Size()
	to, from := "planar", "interleaved"
	if !toPlanar {
		to, from = from, to
	}
	switch {
	case dst.DType() != src.DType() || len(d) != len(s):
		return argErrorf(to+" output", "%v of %d bytes for an %s %v of %d bytes", dst.DType(), len(d), from, src.DType(), len(s))
	case bank <= 0 || size == 0 || len(s)%(size*bank) != 0:
		return argErrorf("bank", "%d kernels for %d elements of %v", bank, len(s)/max(size, 1), src.DType())
	case Overlap(dst, src):
		return argErrorf(to+" output", "shares memory with the %s output", from)
	case len(s) == 0:
		return nil
	}
	n := len(s) / size / bank
	var run func(v0, v1 int)
	switch size {
	case 1:
		run = func(v0, v1 int) { transposeBank(d, s, n, bank, v0, v1, toPlanar) }
	case 2:
		run = func(v0, v1 int) { transposeBank(castBytes[uint16](d), castBytes[uint16](s), n, bank, v0, v1, toPlanar) }
	case 4:
		run = func(v0, v1 int) { transposeBank(castBytes[uint32](d), castBytes[uint32](s), n, bank, v0, v1, toPlanar) }
	case 8:
		run = func(v0, v1 int) { transposeBank(castBytes[uint64](d), castBytes[uint64](s), n, bank, v0, v1, toPlanar) }
	case 16:
		run = func(v0, v1 int) {
			transposeBank(castBytes[[2]uint64](d), castBytes[[2]uint64](s), n, bank, v0, v1, toPlanar)
		}
	default:
		return &UnsupportedError{What: "element size", Value: fmt.Sprint(size), Supported: "1, 2, 4, 8, 16"}
	}
	items := (n + transposeItem - 1) / transposeItem
	return ForEach(workers, items, nil, func(_, i int) {
		run(i*transposeItem, min((i+1)*transposeItem, n))
	})
}

// castBytes views b, whole elements of T in the machine's byte order and
// aligned for T (the bytes of an Array), as a []T sharing its memory.
func castBytes[T any](b []byte) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}

// transposeBank is ToPlanar's (toPlanar) and FromPlanar's loop over
// voxels v0 to v1, tile by tile: dst[k*n + v] = src[v*bank + k], or
// dst[v*bank + k] = src[k*n + v].
func transposeBank[T any](dst, src []T, n, bank, v0, v1 int, toPlanar bool) {
	for vt := v0; vt < v1; vt += transposeTile {
		ve := min(vt+transposeTile, v1)
		for kt := 0; kt < bank; kt += transposeTile {
			ke := min(kt+transposeTile, bank)
			for k := kt; k < ke; k++ {
				if toPlanar {
					out, in := dst[k*n+vt:k*n+ve], src[vt*bank+k:]
					for i := range out {
						out[i] = in[i*bank]
					}
					continue
				}
				in, out := src[k*n+vt:k*n+ve], dst[vt*bank+k:]
				for i, v := range in {
					out[i*bank] = v
				}
			}
		}
	}
}
