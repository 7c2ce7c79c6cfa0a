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
// length) a 2-D one.
func ReadText(r io.Reader) (nd.Array, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var values []float64
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
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nd.Array{}, &FormatError{Format: "text", Msg: fmt.Sprintf("line %d: %q is not a number", line, f)}
			}
			values = append(values, v)
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
	if rows == 1 {
		return nd.FromSlice(values, cols)
	}
	return nd.FromSlice(values, rows, cols)
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
