package tiff

import (
	"encoding/binary"
	"math"

	"github.com/ndconv/ndconv/imageio/internal/predict"
	"github.com/ndconv/ndconv/nd"
)

// getUint reads an unsigned integer of size bytes (1, 2, 4 or 8).
func getUint(b []byte, size int, order binary.ByteOrder) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(order.Uint16(b))
	case 4:
		return uint64(order.Uint32(b))
	}
	return order.Uint64(b)
}

// putUint writes the low 8×size bits of v.
func putUint(b []byte, size int, order binary.ByteOrder, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		order.PutUint16(b, uint16(v))
	case 4:
		order.PutUint32(b, uint32(v))
	default:
		order.PutUint64(b, v)
	}
}

// storeEach converts each size-byte sample of src with conv into
// dst[base], dst[base+stride], ….
func storeEach[T any](dst []T, base, stride int, src []byte, size int, conv func([]byte) T) {
	for i, j := 0, base; i+size <= len(src); i, j = i+size, j+stride {
		dst[j] = conv(src[i : i+size])
	}
}

// storeSamples converts the samples in src, in byte order, into
// dst[base], dst[base+stride], …; dst is of the slice type that holds the
// page's sample type (sampleType.dtype).
func storeSamples(dst any, base, stride int, src []byte, order binary.ByteOrder) {
	switch d := dst.(type) {
	case []uint8:
		if stride == 1 {
			copy(d[base:], src)
			return
		}
		storeEach(d, base, stride, src, 1, func(b []byte) uint8 { return b[0] })
	case []int8:
		storeEach(d, base, stride, src, 1, func(b []byte) int8 { return int8(b[0]) })
	case []uint16:
		if stride == 1 && order == binary.LittleEndian {
			d = d[base : base+len(src)/2]
			for i := range d {
				d[i] = binary.LittleEndian.Uint16(src[2*i:])
			}
			return
		}
		storeEach(d, base, stride, src, 2, func(b []byte) uint16 { return order.Uint16(b) })
	case []int16:
		storeEach(d, base, stride, src, 2, func(b []byte) int16 { return int16(order.Uint16(b)) })
	case []uint32:
		storeEach(d, base, stride, src, 4, func(b []byte) uint32 { return order.Uint32(b) })
	case []int32:
		storeEach(d, base, stride, src, 4, func(b []byte) int32 { return int32(order.Uint32(b)) })
	case []uint64:
		storeEach(d, base, stride, src, 8, func(b []byte) uint64 { return order.Uint64(b) })
	case []int64:
		storeEach(d, base, stride, src, 8, func(b []byte) int64 { return int64(order.Uint64(b)) })
	case []nd.Half:
		storeEach(d, base, stride, src, 2, func(b []byte) nd.Half { return nd.Half(order.Uint16(b)) })
	case []float32:
		storeEach(d, base, stride, src, 4, func(b []byte) float32 { return math.Float32frombits(order.Uint32(b)) })
	case []float64:
		storeEach(d, base, stride, src, 8, func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) })
	}
}

// storePalette looks up each index in src (of size bytes) in the colour map
// and writes its red, green and blue to dst[base+3i : base+3i+3].
func storePalette(dst []uint16, base int, src []byte, size int, order binary.ByteOrder, colormap []uint16) {
	n := len(colormap) / 3
	for i, j := 0, base; i+size <= len(src); i, j = i+size, j+3 {
		index := int(getUint(src[i:], size, order))
		dst[j], dst[j+1], dst[j+2] = colormap[index], colormap[n+index], colormap[2*n+index]
	}
}

// invertFirstChannel replaces channel 0 of the n pixels of dst from
// pixel start on, stride values apart, by max − value: MinIsWhite samples
// as MinIsBlack ones. dst holds uint8, uint16 or uint32 values.
func invertFirstChannel(dst any, start, n, stride int, max uint64) {
	switch d := dst.(type) {
	case []uint8:
		invertEach(d, start, n, stride, uint8(max))
	case []uint16:
		invertEach(d, start, n, stride, uint16(max))
	case []uint32:
		invertEach(d, start, n, stride, uint32(max))
	}
}

func invertEach[T uint8 | uint16 | uint32](d []T, start, n, stride int, max T) {
	for i := range n {
		j := (start + i) * stride
		d[j] = max - d[j]
	}
}

// horizontal undoes (decode) or applies (encode) TIFF predictor 2 on one
// row of samples of size bytes: each sample is stored as its difference
// from the sample stride samples before it, modulo 2^(8·size).
func horizontal(row []byte, size, stride int, order binary.ByteOrder, encode bool) {
	switch {
	case size == 1:
		horizontal8(row, stride, encode)
		return
	case size == 2 && order == binary.LittleEndian:
		horizontal16(row, stride, false, encode)
		return
	case size == 2:
		horizontal16(row, stride, true, encode)
		return
	}
	n := len(row) / size
	at := func(i int) []byte { return row[i*size:] }
	if encode {
		for i := n - 1; i >= stride; i-- {
			putUint(at(i), size, order, getUint(at(i), size, order)-getUint(at(i-stride), size, order))
		}
		return
	}
	for i := stride; i < n; i++ {
		putUint(at(i), size, order, getUint(at(i), size, order)+getUint(at(i-stride), size, order))
	}
}

// floatPredictor undoes (decode) or applies (encode) TIFF predictor 3, as
// libtiff's fpAcc and fpDiff do, on one row of floating-point samples of
// size bytes held in order: the encoded row holds the most significant
// byte of every sample, then the next byte of every sample, and so on (in
// any file byte order), each byte stored as its difference from the byte
// stride bytes before it. scratch must hold len(row) bytes.
func floatPredictor(row, scratch []byte, size, stride int, order binary.ByteOrder, encode bool) {
	n := len(row) / size
	row = row[:n*size]
	// significance(b) is the position of byte b (0 = most significant) in
	// a sample stored in order.
	significance := func(b int) int {
		if order == binary.LittleEndian {
			return size - 1 - b
		}
		return b
	}
	if encode {
		for i := range n {
			for b := range size {
				scratch[significance(b)*n+i] = row[i*size+b]
			}
		}
		copy(row, scratch)
		for i := len(row) - 1; i >= stride; i-- {
			row[i] -= row[i-stride]
		}
		return
	}
	for i := stride; i < len(row); i++ {
		row[i] += row[i-stride]
	}
	copy(scratch, row)
	for i := range n {
		for b := range size {
			row[i*size+b] = scratch[significance(b)*n+i]
		}
	}
}

// horizontal8 is horizontal for bytes: the common case, without a call
// per sample.
func horizontal8(row []byte, stride int, encode bool) {
	if stride >= len(row) {
		return
	}
	if encode {
		for i := len(row) - 1; i >= stride; i-- {
			row[i] -= row[i-stride]
		}
		return
	}
	predict.UndoDifferences(row, stride)
}

// horizontal16 is horizontal for 16-bit samples, little-endian or
// big-endian (bigEndian).
func horizontal16(row []byte, stride int, bigEndian, encode bool) {
	n := len(row) / 2
	if bigEndian {
		// Swapping the bytes in and out keeps one loop to tune.
		swap16(row[:2*n])
		defer swap16(row[:2*n])
	}
	le := binary.LittleEndian
	if encode {
		for i := n - 1; i >= stride; i-- {
			le.PutUint16(row[2*i:], le.Uint16(row[2*i:])-le.Uint16(row[2*(i-stride):]))
		}
		return
	}
	if stride == 1 && n > 0 {
		v := le.Uint16(row)
		for i := 2; i+2 <= 2*n; i += 2 {
			v += le.Uint16(row[i:])
			le.PutUint16(row[i:], v)
		}
		return
	}
	for i := stride; i < n; i++ {
		le.PutUint16(row[2*i:], le.Uint16(row[2*i:])+le.Uint16(row[2*(i-stride):]))
	}
}

func swap16(b []byte) {
	for i := 0; i+1 < len(b); i += 2 {
		b[i], b[i+1] = b[i+1], b[i]
	}
}
