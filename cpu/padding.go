package cpu

import (
	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// padMap says where each position of a padded row takes its values from:
// a padded row holds positions first, first+1, … of a line of n positions;
// positions [lo, hi) of the row are inside the line, copied in one run,
// and the halo's are mapped by the border rule once, here, for every row
// that shares first and n.
type padMap struct {
	first, lo, hi int
	halo          []haloPos
}

// haloPos is a halo position c of the padded row and the line position q
// whose samples it holds, or q < 0 for the constant.
type haloPos struct{ c, q int }

func newPadMap(first, n, positions int, border nd.Border, halo []haloPos) padMap {
	lo := min(max(0, -first), positions)
	hi := max(lo, min(positions, n-first))
	m := padMap{first: first, lo: lo, hi: hi, halo: halo[:0]}
	for _, span := range [2][2]int{{0, lo}, {hi, positions}} {
		for c := span[0]; c < span[1]; c++ {
			q, ok := border.Index(first+c, n)
			if !ok {
				q = -1
			}
			m.halo = append(m.halo, haloPos{c, q})
		}
	}
	return m
}

// loadPadded converts one line of the input into row, where row[c·group+i]
// holds sample i of position m.first+c of the line, each position of group
// contiguous samples, the line starting at element base of src; positions
// outside the line take the border rule's values (cval where it gives
// none), as m maps them.
func loadPadded[F nd.Float](row []F, src any, base, group int, m *padMap, cval F) {
	load(row[m.lo*group:m.hi*group], src, base+(m.first+m.lo)*group)
	same, _ := src.([]F) // the halo's few values are copied without a type switch each
	for _, h := range m.halo {
		samples := row[h.c*group : (h.c+1)*group]
		switch {
		case h.q < 0:
			fill(samples, cval)
		case same != nil:
			copy(samples, same[base+h.q*group:])
		default:
			load(samples, src, base+h.q*group)
		}
	}
}

// load is nd.Load, done by a copy or a SIMD loop where there is one.
func load[F nd.Float](dst []F, src any, off int) {
	switch s := src.(type) {
	case []F:
		copy(dst, s[off:off+len(dst)])
		return
	case []uint8:
		if d, ok := any(dst).([]float32); ok {
			simd.LoadUint8(d, s[off:])
			return
		}
	case []uint16:
		if d, ok := any(dst).([]float32); ok {
			simd.LoadUint16(d, s[off:])
			return
		}
	}
	nd.Load(dst, src, off)
}

// store is nd.Store, done by a copy or a SIMD loop where there is one.
func store[F nd.Float](dst any, off, stride int, src []F) {
	if stride == 1 {
		switch d := dst.(type) {
		case []F:
			copy(d[off:off+len(src)], src)
			return
		case []uint8:
			if s, ok := any(src).([]float32); ok {
				simd.StoreUint8(d[off:off+len(s)], s)
				return
			}
		case []uint16:
			if s, ok := any(src).([]float32); ok {
				simd.StoreUint16(d[off:off+len(s)], s)
				return
			}
		}
	}
	nd.Store(dst, off, stride, src)
}

// into returns dst[off:off+n] where the results may be written there
// directly (dst holds F and stride is 1), or nil where they need store.
func into[F nd.Float](dst any, off, stride, n int) []F {
	if d, ok := dst.([]F); ok && stride == 1 {
		return d[off : off+n]
	}
	return nil
}

func fill[F nd.Float](s []F, v F) {
	for i := range s {
		s[i] = v
	}
}

// view returns n values of src from element off as []F: the slice itself
// when src already holds F, otherwise converted into tmp.
func view[F nd.Float](src any, off, n int, tmp []F) []F {
	if s, ok := src.([]F); ok {
		return s[off : off+n]
	}
	load(tmp[:n], src, off)
	return tmp[:n]
}

// loadPaddedStrided converts one line of the input into row, where row[c]
// holds position first+c of a line of n values stride elements apart,
// starting at element base of src, extended by the border rule (cval where
// it gives none): the FFT engine's lines along any axis.
func loadPaddedStrided[F nd.Float](row []F, src any, base, first, n, stride int, border nd.Border, cval F) {
	lo := min(max(0, -first), len(row))
	hi := max(lo, min(len(row), n-first))
	if hi > lo {
		nd.LoadStrided(row[lo:hi], src, base+(first+lo)*stride, stride)
	}
	for _, span := range [2][2]int{{0, lo}, {hi, len(row)}} {
		for c := span[0]; c < span[1]; c++ {
			if q, ok := border.Index(first+c, n); ok {
				nd.Load(row[c:c+1], src, base+q*stride)
			} else {
				row[c] = cval
			}
		}
	}
}
