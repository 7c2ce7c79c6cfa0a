package cpu

import "github.com/ndconv/ndconv/nd"

// loadPadded converts one line of the input into row, where row[c] holds
// position first+c of a line of n contiguous values starting at element
// base of src, extended by the border rule (cval where it gives none). The
// part inside the input is converted in one run; only the halo is mapped,
// one position at a time.
func loadPadded[F nd.Float](row []F, src any, base, first, n int, border nd.Border, cval F) {
	loadPaddedStrided(row, src, base, first, n, 1, border, cval)
}

// loadPaddedStrided is loadPadded for a line whose values lie stride
// elements apart.
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
	nd.Load(tmp[:n], src, off)
	return tmp[:n]
}
