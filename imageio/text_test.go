package imageio

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestReadTextStrict: kernel tables are read as numpy.loadtxt reads them
// (with delimiter=',' where the first row has a comma, its default white
// space otherwise), as strictly: each case's outcome is numpy 1.24's. Before,
// 1,,3 was the 2-tap [1 3], and 1;2;3 and 1,2,3, were accepted.
func TestReadTextStrict(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		text  string
		shape []int
		data  []float64 // nil: refused
		err   string    // what the error names
	}{
		// The cases of issue 34.
		{text: "1,,3", err: "line 1, field 2: an empty value"},
		{text: "1;2;3", err: `line 1, field 1: "1;2;3" is not a number`},
		{text: "1,2,3,", err: "line 1, field 4: an empty value"},
		// Refused by numpy too.
		{text: ",1", err: "line 1, field 1: an empty value"},
		{text: "1,2\n3,4,", err: "line 2, field 3: an empty value"},
		{text: "1,2\n3,4,5", err: "line 2 has 3 values; the first row (line 1) has 2"},
		{text: "1,2\n3", err: "line 2 has 1 values"},
		{text: "1 2\n\n# c\n3", err: "line 4 has 1 values"},
		{text: "1 2\n3,4", err: `line 2, field 1: "3,4" is not a number (values are separated by white space`},
		{text: "1, 2 3", err: `line 1, field 2: "2 3" is not a number (values are separated by commas`},
		{text: "0x1p-2", err: `"0x1p-2" is not a number`},
		{text: "1_000", err: `"1_000" is not a number`},
		{text: "1d3", err: `"1d3" is not a number`},
		{text: `"1",2`, err: `"\"1\"" is not a number`},
		{text: "1,2\n4,5,e", err: `line 2, field 3: "e" is not a number`},
		{text: "1 e5", err: `field 2: "e5" is not a number`},
		{text: "1e", err: `"1e" is not a number`},
		{text: ".", err: `"." is not a number`},
		{text: "--1", err: `"--1" is not a number`},
		{text: "+-inf", err: `"+-inf" is not a number`},
		{text: "", err: "no numbers"},
		{text: "# only\n\n", err: "no numbers"},
		// Accepted by numpy, with these values.
		{text: "1, 2, 3", shape: []int{3}, data: []float64{1, 2, 3}},
		{text: " 1 , 2 ,3 ", shape: []int{3}, data: []float64{1, 2, 3}},
		{text: "1,2\t", shape: []int{2}, data: []float64{1, 2}},
		{text: "1 2 3", shape: []int{3}, data: []float64{1, 2, 3}},
		{text: "1\t2", shape: []int{2}, data: []float64{1, 2}},
		{text: "1,2 # c\n3,4", shape: []int{2, 2}, data: []float64{1, 2, 3, 4}},
		{text: "# x\n\n1,2\n\n3,4\n", shape: []int{2, 2}, data: []float64{1, 2, 3, 4}},
		{text: "1,2\r\n3,4\r\n", shape: []int{2, 2}, data: []float64{1, 2, 3, 4}},
		{text: "+1,.5,5.,-0", shape: []int{4}, data: []float64{1, .5, 5, math.Copysign(0, -1)}},
		{text: "1e5, 1E-3", shape: []int{2}, data: []float64{1e5, 1e-3}},
		{text: "inf,-Infinity,+INF", shape: []int{3}, data: []float64{inf, -inf, inf}},
		{text: "1e999 -1e999 1e-999", shape: []int{3}, data: []float64{inf, -inf, 0}},
		{text: "1\n2\n3", shape: []int{3, 1}, data: []float64{1, 2, 3}}, // rows of numbers are 2-D (DESIGN §4)
	} {
		got, err := ReadText(strings.NewReader(c.text))
		if c.data == nil {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v %v, want an error naming %q", c.text, got.Shape, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if fmt.Sprint(got.Shape) != fmt.Sprint(c.shape) || fmt.Sprint(got.Data) != fmt.Sprint(c.data) {
			t.Errorf("%q: %v %v, want %v %v", c.text, got.Shape, got.Data, c.shape, c.data)
		}
	}
	// NaN is a number.
	if got, err := ReadText(strings.NewReader("nan, NaN, -nan, +NAN")); err != nil || !math.IsNaN(got.Data.([]float64)[1]) || !math.IsNaN(got.Data.([]float64)[3]) {
		t.Errorf("nan: %v %v", got.Data, err)
	}
}

// The reference grammar of FuzzReadText, written apart from ReadText's
// scanner: Python's float() less underscores, and complex numbers as
// Python writes them (or with Go's i).
var (
	refUnsigned = `(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))`
	refReal     = regexp.MustCompile(`^[+-]?` + refUnsigned + `$`)
	refComplex  = regexp.MustCompile(`^(?:[+-]?` + refUnsigned + `)?[+-]?` + refUnsigned + `[jJi]$`)
)

// refParse reads a table by the rules ReadText documents, with regular
// expressions and strconv; ok is false where the rules refuse it.
func refParse(text string) (shape []int, values []complex128, isComplex, ok, skip bool) {
	rows, cols := 0, 0
	commas := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		line, _, _ = strings.Cut(line, "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if rows == 0 {
			commas = strings.Contains(line, ",")
		}
		fields := strings.Fields(line)
		if commas {
			fields = strings.Split(line, ",")
		}
		if rows == 0 {
			cols = len(fields)
		} else if len(fields) != cols {
			return nil, nil, false, false, false
		}
		for _, f := range fields {
			f = strings.TrimSpace(f)
			if len(f) >= 2 && f[0] == '(' && f[len(f)-1] == ')' {
				f = f[1 : len(f)-1]
			}
			switch {
			case refReal.MatchString(f):
				v, _ := strconv.ParseFloat(f, 64) // out of range: ±Inf or 0, as Python's
				if strings.EqualFold(strings.TrimLeft(f, "+-"), "nan") {
					v = math.NaN()
				}
				values = append(values, complex(v, 0))
			case refComplex.MatchString(f):
				v, err := strconv.ParseComplex(f[:len(f)-1]+"i", 128)
				if err != nil {
					return nil, nil, false, false, true // out of range: not compared
				}
				values = append(values, v)
				isComplex = true
			default:
				return nil, nil, false, false, false
			}
		}
		rows++
	}
	if rows == 0 {
		return nil, nil, false, false, false
	}
	if rows == 1 {
		return []int{cols}, values, isComplex, true, false
	}
	return []int{rows, cols}, values, isComplex, true, false
}

// FuzzReadText: ReadText never panics, accepts exactly what the reference
// grammar accepts, with the same values, and what it accepts reads back
// the same when written out again (commas or spaces, %v of each value).
func FuzzReadText(f *testing.F) {
	for _, s := range []string{
		"1,2,1\n2,4,2\n1,2,1\n", "# c\n0 1 0\n1 -4 1\n0 1 0\n", "1,,3", "1;2;3", "1,2,3,",
		"1j, 2\n3, -4.5", "1 2 (3-2J) 0j", "1e3+1e-3j,inf,nan", "  1 , 2 # x\r\n3,4\r\n", "1e999,-.5e-3,5.",
		"1+", "j", "1 + 2j", "(1+2j", "0x10", "1_0", "-nan, +NaN", "1-nanj",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ReadText(strings.NewReader(text))
		shape, want, isComplex, ok, skip := refParse(text)
		if skip {
			return
		}
		if ok != (err == nil) {
			t.Fatalf("%q: ReadText %v, the reference accepts: %v", text, err, ok)
		}
		if !ok {
			return
		}
		if fmt.Sprint(got.Shape) != fmt.Sprint(shape) || got.DType().IsComplex() != isComplex {
			t.Fatalf("%q: %v %v, reference %v complex=%v", text, got.DType(), got.Shape, shape, isComplex)
		}
		gotC := complexValues(got)
		for i := range want {
			if !sameComplex(gotC[i], want[i]) {
				t.Fatalf("%q: value %d is %v, reference %v", text, i, gotC[i], want[i])
			}
		}
		// Round trip: write the table out and read it back.
		for _, sep := range []string{",", " "} {
			var b strings.Builder
			cols := got.Shape[len(got.Shape)-1]
			for i, v := range gotC {
				if i > 0 && i%cols == 0 {
					b.WriteString("\n")
				} else if i > 0 {
					b.WriteString(sep)
				}
				if isComplex {
					fmt.Fprintf(&b, "(%sj)", strings.TrimSuffix(strings.Trim(strconv.FormatComplex(v, 'g', -1, 128), "()"), "i"))
				} else {
					b.WriteString(strconv.FormatFloat(real(v), 'g', -1, 64))
				}
			}
			back, err := ReadText(strings.NewReader(b.String()))
			if err != nil {
				t.Fatalf("%q written as %q: %v", text, b.String(), err)
			}
			backC := complexValues(back)
			if fmt.Sprint(back.Shape) != fmt.Sprint(got.Shape) || len(backC) != len(gotC) {
				t.Fatalf("%q written as %q: shape %v, want %v", text, b.String(), back.Shape, got.Shape)
			}
			for i := range gotC {
				if !sameComplex(backC[i], gotC[i]) {
					t.Fatalf("%q written as %q: value %d %v, want %v", text, b.String(), i, backC[i], gotC[i])
				}
			}
		}
	})
}

func complexValues(a nd.Array) []complex128 {
	switch d := a.Data.(type) {
	case []complex128:
		return d
	case []float64:
		c := make([]complex128, len(d))
		for i, v := range d {
			c[i] = complex(v, 0)
		}
		return c
	}
	return nil
}

func sameComplex(a, b complex128) bool {
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return same(real(a), real(b)) && same(imag(a), imag(b))
}
