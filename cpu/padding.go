package cpu

import "github.com/ndconv/ndconv/nd"

// loadPadded converts one line of the input into row, where row[c] holds
// position first+c of a line of n contiguous values starting at element
// base of src, extended by the border rule (cval where it gives none). The
// part inside the input is converted in one run; only the halo is mapped,
// one position at a time.
func loadPadded[F nd.Float](row []F, src any, base, first, n int, border nd.Border, cval F) {
	lo := min(max(0, -first), len(row))
	hi := max(lo, min(len(row), n-first))
	load(row[lo:hi], src, base+first+lo)
	for _, span := range [2][2]int{{0, lo}, {hi, len(row)}} {
		for c := span[0]; c < span[1]; c++ {
			if q, ok := border.Index(first+c, n); ok {
				nd.Load(row[c:c+1], src, base+q)
			} else {
				row[c] = cval
			}
		}
	}
}

// load is nd.Load, a plain copy when src already holds F.
func load[F nd.Float](dst []F, src any, off int) {
	if s, ok := src.([]F); ok {
		copy(dst, s[off:off+len(dst)])
		return
	}
	nd.Load(dst, src, off)
}

// store is nd.Store, a plain copy when dst holds F and stride is 1.
func store[F nd.Float](dst any, off, stride int, src []F) {
	if d, ok := dst.([]F); ok && stride == 1 {
		copy(d[off:off+len(src)], src)
		return
	}
	nd.Store(dst, off, stride, src)
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
