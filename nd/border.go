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

// borderAliases are the other names users type for the five rules: numpy's
// np.pad modes, OpenCV's BORDER_* names and scipy's grid-* modes. For
// filters scipy treats grid-mirror, grid-wrap and grid-constant as synonyms
// of reflect, wrap and constant (they differ only for interpolation).
// numpy's own "reflect" is scipy's mirror; ndconv keeps scipy's meaning.
var borderAliases = []struct {
	name   string
	border Border
}{
	{"symmetric", Reflect}, {"grid-mirror", Reflect},
	{"reflect101", Mirror}, {"reflect_101", Mirror},
	{"edge", Nearest}, {"replicate", Nearest},
	{"grid-wrap", Wrap},
	{"grid-constant", Constant},
}

func (b Border) String() string { return EnumName(borderNames[:], b, "Border") }

// BorderNames lists the accepted border names for help texts and errors:
// the five rules, then each rule's aliases, e.g. "reflect (symmetric,
// grid-mirror), mirror (reflect101, reflect_101), …".
func BorderNames() string {
	var b strings.Builder
	for i, n := range borderNames {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
		var aliases []string
		for _, a := range borderAliases {
			if int(a.border) == i {
				aliases = append(aliases, a.name)
			}
		}
		if len(aliases) > 0 {
			b.WriteString(" (" + strings.Join(aliases, ", ") + ")")
		}
	}
	return b.String()
}

// ParseBorder accepts the five names and their aliases (BorderNames),
// ignoring case and surrounding space.
func ParseBorder(s string) (Border, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for i, n := range borderNames {
		if name == n {
			return Border(i), nil
		}
	}
	for _, a := range borderAliases {
		if name == a.name {
			return a.border, nil
		}
	}
	return 0, &UnsupportedError{What: "border", Value: s, Supported: BorderNames()}
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
