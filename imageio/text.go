package imageio

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// maxTextValues bounds a text array, which is meant for kernels and small
// tables, not images.
const maxTextValues = 1 << 24

// ReadText reads a table of numbers: one row per line, values separated by
// commas and/or white space; blank lines and lines starting with # are
// skipped. One row gives a 1-D float64 array, several rows (all of one
// length) a 2-D one. A value written as Python writes a complex number
// (1+2j, -0.5j, (1-2j): see ParseComplex) makes the table complex128.
func ReadText(r io.Reader) (nd.Array, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var values, imags []float64 // imags nil until a complex value
	rows, cols := 0, 0
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' })
		if rows == 0 {
			cols = len(fields)
		} else if len(fields) != cols {
			return nd.Array{}, &FormatError{Format: "text", Msg: fmt.Sprintf("line %d has %d values, the first row has %d", line, len(fields), cols)}
		}
		for _, f := range fields {
			v, err := ParseComplex(f)
			if err != nil {
				return nd.Array{}, &FormatError{Format: "text", Msg: fmt.Sprintf("line %d: %q is not a number", line, f)}
			}
			if imags == nil && (imag(v) != 0 || strings.ContainsAny(f, "jJ")) {
				imags = make([]float64, len(values), cap(values))
			}
			values = append(values, real(v))
			if imags != nil {
				imags = append(imags, imag(v))
			}
		}
		if len(values) > maxTextValues {
			return nd.Array{}, &FormatError{Format: "text", Msg: fmt.Sprintf("more than %d values", maxTextValues)}
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return nd.Array{}, fmt.Errorf("imageio: reading text: %w", err)
	}
	if rows == 0 {
		return nd.Array{}, &FormatError{Format: "text", Msg: "no numbers"}
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

// ParseComplex reads a real or complex number as Python writes one: 2.5,
// -1e-3, inf, nan, and 1+2j, -0.5j, 2J, (1-2j) (Go's 1+2i too), without
// spaces inside.
func ParseComplex(s string) (complex128, error) {
	t := strings.TrimSpace(s)
	if len(t) >= 2 && t[0] == '(' && t[len(t)-1] == ')' {
		t = t[1 : len(t)-1]
	}
	if n := len(t); n > 0 && (t[n-1] == 'j' || t[n-1] == 'J') {
		t = t[:n-1] + "i"
	}
	v, err := strconv.ParseComplex(t, 128)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
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
