package zarr

import "encoding/binary"

// unshuffleBytes undoes blosc's byte shuffle of one block: src holds the
// first byte of every element, then every second byte, …; bytes past the
// last whole element are as they were. Elements of 2 and 4 bytes (uint16
// and float32 volumes, the common ones) are interleaved by SSE2 on amd64
// (~25 GB/s in cache) and whole elements at a time elsewhere (~1.5 GB/s):
// a byte at a time, a stride apart, ran at ~0.5 GB/s and was two thirds of
// decoding a default zarr-python chunk (Blosc LZ4 with shuffle).
func unshuffleBytes(dst, src []byte, typesize int) {
	n := len(src) / typesize
	var buf [8][]byte
	unshuffleAt(dst[:n*typesize], shuffledRows(src, n, typesize, &buf), 0, typesize)
	copy(dst[n*typesize:], src[n*typesize:])
}

// shuffledRows are the rows of a shuffled block b of n elements of
// typesize bytes: row j holds byte j of every element. buf holds them
// for elements of up to 8 bytes.
func shuffledRows(b []byte, n, typesize int, buf *[8][]byte) [][]byte {
	rows := buf[:0]
	for j := range typesize {
		rows = append(rows, b[j*n:(j+1)*n])
	}
	return rows
}

// unshuffleAt writes elements i to i+len(dst)/typesize of a shuffled
// block whose rows are rows (row j holds byte j of every element, and
// may lie anywhere: blosc's splits stored raw are read where they are)
// to dst: unshuffleBytes for a run of the block's elements, which a
// chunk's rows in a larger array take one at a time (runs.unshuffle).
func unshuffleAt(dst []byte, rows [][]byte, i, typesize int) {
	k := len(dst) / typesize
	row := func(j int) []byte { return rows[j][i : i+k] }
	switch typesize {
	case 1:
		copy(dst, row(0))
	case 2:
		unshuffle2(dst, row(0), row(1))
	case 4:
		unshuffle4(dst, row(0), row(1), row(2), row(3))
	case 8:
		var rs [8][]byte
		for j := range rs {
			rs[j] = row(j)
		}
		out := dst
		for e := 0; e < k && len(out) >= 8; e++ {
			var v uint64
			for j := range rs {
				v |= uint64(rs[j][e]) << (8 * j)
			}
			binary.LittleEndian.PutUint64(out, v)
			out = out[8:]
		}
	default:
		for j := range typesize {
			for e, v := range row(j) {
				dst[e*typesize+j] = v
			}
		}
	}
}

// unshuffleGeneric is unshuffleBytes a byte at a time, for any element
// size (bytes past the last whole element left to the caller): the
// reference the tests check the others against.
func unshuffleGeneric(dst, src []byte, typesize int) {
	n := len(src) / typesize
	for j := range typesize {
		row := src[j*n : (j+1)*n]
		for i, v := range row {
			dst[i*typesize+j] = v
		}
	}
}

// unshuffle2Go interleaves the rows a (low bytes) and b of 2-byte
// elements into dst: the twin of unshuffle2SSE2.
func unshuffle2Go(dst, a, b []byte) {
	b = b[:len(a)]
	for i := 0; i < len(a) && len(dst) >= 2; i++ {
		binary.LittleEndian.PutUint16(dst, uint16(a[i])|uint16(b[i])<<8)
		dst = dst[2:]
	}
}

// unshuffle4Go interleaves the rows a (bytes 0), b, c and d of 4-byte
// elements into dst: the twin of unshuffle4SSE2.
func unshuffle4Go(dst, a, b, c, d []byte) {
	b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
	for i := 0; i < len(a) && len(dst) >= 4; i++ {
		binary.LittleEndian.PutUint32(dst, uint32(a[i])|uint32(b[i])<<8|uint32(c[i])<<16|uint32(d[i])<<24)
		dst = dst[4:]
	}
}

// shuffleBytes is unshuffleBytes' inverse (the writer's), with the same
// element sizes in SSE2 on amd64.
func shuffleBytes(dst, src []byte, typesize int) {
	n := len(src) / typesize
	shuffleAt(dst, src[:n*typesize], n, 0, typesize)
	copy(dst[n*typesize:], src[n*typesize:])
}

// shuffleAt is unshuffleAt's inverse: it writes the len(src)/typesize
// elements of src as elements i on of the shuffled block dst (n elements).
func shuffleAt(dst, src []byte, n, i, typesize int) {
	k := len(src) / typesize
	row := func(j int) []byte { return dst[j*n+i : j*n+i+k] }
	switch typesize {
	case 1:
		copy(row(0), src)
	case 2:
		shuffle2(row(0), row(1), src)
	case 4:
		shuffle4(row(0), row(1), row(2), row(3), src)
	default:
		for j := range typesize {
			r := row(j)
			for e := range r {
				r[e] = src[e*typesize+j]
			}
		}
	}
}

// shuffle2Go splits the 2-byte elements of src into the rows a (low
// bytes) and b: the twin of shuffle2SSE2.
func shuffle2Go(a, b, src []byte) {
	b = b[:len(a)]
	for i := 0; i < len(a) && len(src) >= 2; i++ {
		v := binary.LittleEndian.Uint16(src)
		a[i], b[i] = byte(v), byte(v>>8)
		src = src[2:]
	}
}

// shuffle4Go splits the 4-byte elements of src into the rows a (bytes 0),
// b, c and d: the twin of shuffle4SSE2.
func shuffle4Go(a, b, c, d, src []byte) {
	b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
	for i := 0; i < len(a) && len(src) >= 4; i++ {
		v := binary.LittleEndian.Uint32(src)
		a[i], b[i], c[i], d[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		src = src[4:]
	}
}
