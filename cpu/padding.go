package cpu

import "github.com/ndconv/ndconv/nd"

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
