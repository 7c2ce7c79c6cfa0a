package nd

import "strings"

// Border is the rule that extends an array beyond its edges. The zero value
// is Reflect, scipy.ndimage's default.
type Border uint8

const (
	Reflect  Border = iota // d c b a | a b c d | d c b a (half-sample symmetric)
	Mirror                 // d c b | a b c d | c b a (whole-sample symmetric)
	Nearest                // a a a | a b c d | d d d (clamp)
	Wrap                   // b c d | a b c d | a b c (periodic)
	Constant               // k k k | a b c d | k k k, k = cval
)

var borderNames = [...]string{"reflect", "mirror", "nearest", "wrap", "constant"}

func (b Border) String() string { return EnumName(borderNames[:], b, "Border") }

// ParseBorder accepts the five names and scipy's grid-* aliases, which mean
// the same for filters.
func ParseBorder(s string) (Border, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "reflect", "grid-mirror":
		return Reflect, nil
	case "mirror":
		return Mirror, nil
	case "nearest":
		return Nearest, nil
	case "wrap", "grid-wrap":
		return Wrap, nil
	case "constant", "grid-constant":
		return Constant, nil
	}
	return 0, &UnsupportedError{What: "border", Value: s, Supported: strings.Join(borderNames[:], ", ")}
}

// Index maps position p on an axis of length n > 0 to the index whose value
// the border rule places there. It reports false when the value is the
// constant (Constant border, p outside [0, n)). It is exact at any distance.
func (b Border) Index(p, n int) (int, bool) {
	if p >= 0 && p < n {
		return p, true
	}
	switch b {
	case Reflect:
		q := floorMod(p, 2*n)
		if q >= n {
			q = 2*n - 1 - q
		}
		return q, true
	case Mirror:
		if n == 1 {
			return 0, true
		}
		q := floorMod(p, 2*n-2)
		if q >= n {
			q = 2*n - 2 - q
		}
		return q, true
	case Nearest:
		if p < 0 {
			return 0, true
		}
		return n - 1, true
	case Wrap:
		return floorMod(p, n), true
	}
	return 0, false
}

func floorMod(a, m int) int {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}
