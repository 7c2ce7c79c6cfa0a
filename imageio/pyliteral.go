package imageio

import (
	"fmt"
	"strconv"
)

// This file parses the subset of Python literal syntax that .npy headers use:
// dicts, tuples and lists of strings, integers, True, False and None, as
// ast.literal_eval would read them. Anything else is an error; nothing is
// evaluated.

type pyKind uint8

const (
	pyStr pyKind = iota
	pyInt
	pyBool
	pyNone
	pyTuple
	pyList
	pyDict
)

var pyKindNames = [...]string{"string", "integer", "bool", "None", "tuple", "list", "dict"}

func (k pyKind) String() string { return pyKindNames[k] }

// pyValue is one parsed literal. text is its source, for messages.
type pyValue struct {
	kind  pyKind
	text  string
	str   string    // pyStr
	num   int64     // pyInt, valid unless big
	big   bool      // pyInt beyond int64
	b     bool      // pyBool
	items []pyValue // pyTuple, pyList; pyDict: key, value, key, value, …
}

// pyMaxDepth bounds the nesting of brackets, so that a header of a million
// '(' fails quickly instead of recursing deeply.
const pyMaxDepth = 16

type pyParser struct {
	s     []byte
	pos   int
	depth int
}

// parsePyLiteral parses s as exactly one literal, surrounded by optional
// whitespace.
func parsePyLiteral(s []byte) (pyValue, error) {
	p := &pyParser{s: s}
	p.space()
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.space()
	if p.pos < len(p.s) {
		return v, p.errorf("unexpected %s after the literal", p.peekDesc())
	}
	return v, nil
}

func (p *pyParser) errorf(format string, a ...any) error {
	return fmt.Errorf("%s at offset %d", fmt.Sprintf(format, a...), p.pos)
}

// peekDesc describes the next character for a message.
func (p *pyParser) peekDesc() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	return strconv.QuoteRune(rune(p.s[p.pos]))
}

func (p *pyParser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

func (p *pyParser) value() (pyValue, error) {
	start := p.pos
	if p.pos >= len(p.s) {
		return pyValue{}, p.errorf("unexpected end of header")
	}
	var v pyValue
	var err error
	switch c := p.s[p.pos]; {
	case c == '{':
		v, err = p.seq(pyDict, '}')
	case c == '(':
		v, err = p.seq(pyTuple, ')')
	case c == '[':
		v, err = p.seq(pyList, ']')
	case c == '\'' || c == '"':
		v, err = p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		v, err = p.integer()
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
		v, err = p.name()
	default:
		return pyValue{}, p.errorf("unexpected %s", p.peekDesc())
	}
	if err != nil {
		return v, err
	}
	if v.text == "" {
		v.text = string(p.s[start:p.pos])
	}
	return v, nil
}

// seq parses a dict, tuple or list; p.s[p.pos] is the opening bracket.
// A parenthesised single value without a trailing comma is that value, as
// in Python: (3) is 3, (3,) is a tuple.
func (p *pyParser) seq(kind pyKind, closer byte) (pyValue, error) {
	if p.depth >= pyMaxDepth {
		return pyValue{}, p.errorf("brackets nested more than %d deep", pyMaxDepth)
	}
	p.depth++
	defer func() { p.depth-- }()
	p.pos++ // opening bracket
	v := pyValue{kind: kind}
	commas := 0
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == closer {
			p.pos++
			break
		}
		item, err := p.value()
		if err != nil {
			return v, err
		}
		v.items = append(v.items, item)
		p.space()
		if kind == pyDict {
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return v, p.errorf("expected ':' after a dict key, found %s", p.peekDesc())
			}
			p.pos++
			p.space()
			val, err := p.value()
			if err != nil {
				return v, err
			}
			v.items = append(v.items, val)
			p.space()
		}
		if p.pos >= len(p.s) {
			return v, p.errorf("missing %q", closer)
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
			commas++
		case closer:
		default:
			return v, p.errorf("expected ',' or %q, found %s", closer, p.peekDesc())
		}
	}
	if kind == pyTuple && len(v.items) == 1 && commas == 0 {
		return v.items[0], nil // (x) is x
	}
	return v, nil
}

func (p *pyParser) string() (pyValue, error) {
	quote := p.s[p.pos]
	p.pos++
	var out []byte
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		switch {
		case c == quote:
			return pyValue{kind: pyStr, str: string(out)}, nil
		case c == '\n':
			return pyValue{}, p.errorf("newline in a string")
		case c == '\\':
			if p.pos >= len(p.s) {
				return pyValue{}, p.errorf("unterminated string")
			}
			e := p.s[p.pos]
			p.pos++
			switch e {
			case '\\', '\'', '"':
				out = append(out, e)
			case 'n':
				out = append(out, '\n')
			case 't':
				out = append(out, '\t')
			default:
				return pyValue{}, p.errorf("unsupported escape \\%c in a string", e)
			}
		default:
			out = append(out, c)
		}
	}
	return pyValue{}, p.errorf("unterminated string")
}

// integer parses a decimal integer with an optional '-' and, as Python 2
// wrote long integers in old headers, an optional 'L' suffix.
func (p *pyParser) integer() (pyValue, error) {
	start := p.pos
	neg := p.s[p.pos] == '-'
	if neg {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits {
		return pyValue{}, p.errorf("expected digits after '-'")
	}
	num := p.s[digits:p.pos]
	if len(num) > 1 && num[0] == '0' {
		return pyValue{}, p.errorf("integer %q has a leading zero", num)
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
		p.pos++
	}
	if p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
		return pyValue{}, p.errorf("unexpected %s in an integer", p.peekDesc())
	}
	v := pyValue{kind: pyInt, text: string(p.s[start:p.pos])}
	n, err := strconv.ParseInt(string(p.s[start:digits])+string(num), 10, 64)
	if err != nil {
		v.big = true // only a range error is possible here
	}
	v.num = n
	return v, nil
}

func isNameByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

func (p *pyParser) name() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
		p.pos++
	}
	switch n := string(p.s[start:p.pos]); n {
	case "True":
		return pyValue{kind: pyBool, b: true}, nil
	case "False":
		return pyValue{kind: pyBool}, nil
	case "None":
		return pyValue{kind: pyNone}, nil
	default:
		p.pos = start
		return pyValue{}, p.errorf("unexpected name %q", n)
	}
}
