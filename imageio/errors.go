package imageio

import (
	"fmt"
)

// FormatError reports input that is not a valid file of its format: a wrong
// magic string, a truncated file, a malformed header.
type FormatError struct {
	Format string // the format, as a user names it: ".npy"
	Msg    string // what is wrong: "truncated header"
	Err    error  // the underlying cause, such as io.ErrUnexpectedEOF, or nil
}

func (e *FormatError) Error() string { return "imageio: invalid " + e.Format + ": " + e.Msg }

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError reports a well-formed file or value that ndconv cannot
// represent, such as a complex .npy dtype or an array with five channels
// given as an image.
type UnsupportedError struct {
	Format string // the format (".npy") or "" where none applies
	What   string // "dtype", "format version", "image shape", …
	Value  string // the value as found: "<c16", "4.0", "[4 4 5]"
	Detail string // the value in words, or why it is refused; may be ""
}

func (e *UnsupportedError) Error() string {
	msg := "imageio: unsupported "
	if e.Format != "" {
		msg += e.Format + " "
	}
	msg += fmt.Sprintf("%s %q", e.What, e.Value)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func npyFormatError(err error, format string, a ...any) error {
	return &FormatError{Format: ".npy", Msg: fmt.Sprintf(format, a...), Err: err}
}
