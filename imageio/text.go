package imageio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// maxTextValues bounds a text array, which is meant for kernels and small
// tables, not images.
const maxTextValues = 1 << 24

// ReadText reads a table of numbers as numpy.loadtxt does, and as
// strictly: one row per line; # starts a comment that runs to the end of
// the line; blank lines are skipped. The first row decides how values are
// separated: by commas if it has one (numpy.loadtxt(…, delimiter=',')),
// else by white space (numpy.loadtxt's default). With commas, every value
// sits between two commas or a comma and the line's end, white space
// around it allowed; an empty value (1,,3 or a trailing comma) is an error,
// as any other separator (1;2;3) is part of a value that is then not a
// number. Every row must have the first row's length. One row gives a 1-D
// float64 array, several rows a 2-D one. Numbers are written as Python
// writes them: 2.5, -1e-3, .5, 5., inf, nan (no hex, no underscores). A
// value written as Python writes a complex number (1+2j, -0.5j, (1-2j):
// see ParseComplex) makes the table complex128. An error names the line
// and the field.
func ReadText(r io.Reader) (nd.Array, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var values, imags []float64 // imags nil until a complex value
	rows, cols, firstLine := 0, 0, 0
	commas := false
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		if rows == 0 {
			commas = strings.Contains(text, ",")
			firstLine = line
		}
		var fields []string
		if commas {
			fields = strings.Split(text, ",")
		} else {
			fields = strings.Fields(text)
		}
		for i, f := range fields {
			f = strings.TrimSpace(f)
			if f == "" {
				return nd.Array{}, textErrorf("line %d, field %d: an empty value (two commas in a row, or a comma at the start or end of the line)", line, i+1)
			}
			v, isComplex, err := parseNumber(f)
			if err != nil {
				sep := "white space"
				if commas {
					sep = "commas"
				}
				return nd.Array{}, textErrorf("line %d, field %d: %q is not a number (values are separated by %s, as in the first row)", line, i+1, f, sep)
			}
			if imags == nil && isComplex {
				imags = make([]float64, len(values), cap(values))
			}
			values = append(values, real(v))
			if imags != nil {
				imags = append(imags, imag(v))
			}
		}
		if rows == 0 {
			cols = len(fields)
		} else if len(fields) != cols {
			return nd.Array{}, textErrorf("line %d has %d values; the first row (line %d) has %d", line, len(fields), firstLine, cols)
		}
		if len(values) > maxTextValues {
			return nd.Array{}, textErrorf("more than %d values", maxTextValues)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return nd.Array{}, fmt.Errorf("imageio: reading text: %w", err)
	}
	if rows == 0 {
		return nd.Array{}, textErrorf("no numbers")
	}
	shape := []int{rows, cols}
	if rows == 1 {
		shape = shape[1:]
	}
	if imags != nil {
		c := make([]complex128, len(values))
		for i, v := range values {
			c[i] = complex(v, imags[i])
		}
		return nd.FromSlice(c, shape...)
	}
	return nd.FromSlice(values, shape...)
}

func textErrorf(format string, a ...any) error {
	return &FormatError{Format: "text", Msg: fmt.Sprintf(format, a...)}
}

// ParseComplex reads a real or complex number as Python writes one: 2.5,
// -1e-3, inf, nan, and 1+2j, -0.5j, 2J, (1-2j) (Go's 1+2i too), without
// spaces inside. Each part is a number as Python's float() reads it, less
// its underscores (numpy.loadtxt's rule); a magnitude beyond float64's
// range is ±Inf, as there.
func ParseComplex(s string) (complex128, error) {
	v, _, err := parseNumber(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// parseNumber reads a real or complex number (ParseComplex) and reports
// whether it was written as a complex one.
func parseNumber(t string) (v complex128, isComplex bool, err error) {
	if len(t) >= 2 && t[0] == '(' && t[len(t)-1] == ')' {
		t = t[1 : len(t)-1]
	}
	n := len(t)
	if n == 0 || !strings.ContainsAny(t[n-1:], "jJi") {
		re, err := parseReal(t)
		return complex(re, 0), false, err
	}
	body := t[:n-1]
	// The imaginary part starts at the last sign that is not the first
	// character and does not follow an exponent's e.
	split := -1
	for i := len(body) - 1; i > 0; i-- {
		if (body[i] == '+' || body[i] == '-') && body[i-1] != 'e' && body[i-1] != 'E' {
			split = i
			break
		}
	}
	reText, imText := "", body
	if split > 0 {
		reText, imText = body[:split], body[split:]
	}
	var re, im float64
	if reText != "" {
		if re, err = parseReal(reText); err != nil {
			return 0, true, err
		}
	}
	if im, err = parseReal(imText); err != nil {
		return 0, true, err
	}
	return complex(re, im), true, nil
}

// parseReal reads a real number in Python's float() syntax without
// underscores: [sign] (digits [. [digits]] | . digits) [e [sign] digits],
// or inf, infinity, nan in any case. strconv alone would also take hex
// floats and underscores, which numpy.loadtxt refuses.
func parseReal(t string) (float64, error) {
	if !isDecimal(t) {
		u := strings.ToLower(strings.TrimLeft(t, "+-"))
		if len(t)-len(u) > 1 || (u != "inf" && u != "infinity" && u != "nan") {
			return 0, strconv.ErrSyntax
		}
		if u == "nan" {
			return math.NaN(), nil // strconv takes no sign on it; Python does
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	return v, nil // out of range: ±Inf, or 0, as Python gives
}

// isDecimal reports whether t is [sign] (digits [. [digits]] | . digits)
// [e [sign] digits].
func isDecimal(t string) bool {
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := func() int {
		j := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		return i - j
	}
	mantissa := digits()
	if i < len(t) && t[i] == '.' {
		i++
		mantissa += digits()
	}
	if mantissa == 0 {
		return false
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(t)
}

// ReadTextFile reads a text array from a file.
func ReadTextFile(path string) (nd.Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nd.Array{}, err
	}
	defer f.Close()
	return ReadText(f)
}
