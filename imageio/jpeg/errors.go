package jpeg

import "fmt"

// FormatError reports data that is not a valid JPEG: a missing marker, a
// table that does not parse, entropy-coded data that ends early or holds
// a code no table defines. A file cut short has Msg "truncated file" and
// wraps io.ErrUnexpectedEOF.
type FormatError struct {
	Msg string
	Err error // the underlying cause, or nil
}

func (e *FormatError) Error() string { return "jpeg: invalid JPEG: " + e.Msg }

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError reports a valid JPEG that this package does not decode
// (progressive, arithmetic-coded, lossless, 12-bit, CMYK, unusual
// sampling), or an option it does not encode. Callers fall back to another
// decoder for these.
type UnsupportedError struct {
	What string // "progressive JPEG", "precision 12", …
}

func (e *UnsupportedError) Error() string { return "jpeg: unsupported " + e.What }

func formatErr(format string, a ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, a...)}
}

func unsupported(format string, a ...any) error {
	return &UnsupportedError{What: fmt.Sprintf(format, a...)}
}
