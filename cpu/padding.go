package cpu

import (
	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// loadPadded converts one line of the input into row, where row[c·group+i]
// holds sample i of position first+c of a line of n positions, each of group
// contiguous samples, starting at element base of src; positions outside
// the line take the border rule's values (cval where it gives none). The
// part inside the input is converted in one run; only the halo is mapped,
// one position at a time.
func loadPadded[F nd.Float](row []F, src any, base, first, n, group int, border nd.Border, cval F) {
	positions := len(row) / group
	lo := min(max(0, -first), positions)
	hi := max(lo, min(positions, n-first))
	load(row[lo*group:hi*group], src, base+(first+lo)*group)
	for _, span := range [2][2]int{{0, lo}, {hi, positions}} {
		for c := span[0]; c < span[1]; c++ {
			samples := row[c*group : (c+1)*group]
			if q, ok := border.Index(first+c, n); ok {
				load(samples, src, base+q*group)
			} else {
				fill(samples, cval)
			}
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
