package nd

import (
	"fmt"
	"strings"
)

// EnumName returns names[v], or Type(v) when v is out of range: the String
// method of the small named enumerations (Border, Mode, plan.Method).
func EnumName[T ~uint8](names []string, v T, typeName string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typeName, uint8(v))
}

// ParseEnum returns the value whose name is s (ignoring case and
// surrounding space), or an UnsupportedError listing the names.
func ParseEnum[T ~uint8](names []string, s, what string) (T, error) {
	for i, n := range names {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return T(i), nil
		}
	}
	return 0, &UnsupportedError{What: what, Value: s, Supported: strings.Join(names, ", ")}
}
