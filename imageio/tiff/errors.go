package tiff

import "fmt"

// FormatError reports input that is not a valid TIFF file: a wrong magic
// number, a truncated file, a tag with an impossible value, strip data that
// do not decode.
type FormatError struct {
	Msg string // what is wrong and where: "IFD 1: strip 3: LZW data end after 12 of 35 bytes"
	Err error  // the underlying cause, such as io.ErrUnexpectedEOF, or nil
}

func (e *FormatError) Error() string {
	msg := "tiff: invalid TIFF: " + e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError reports a well-formed TIFF file, or an Image given to
// Write, that this package cannot represent: a YCbCr or CMYK page, JPEG
// compression, 1-bit samples, pages of different sizes.
type UnsupportedError struct {
	What   string // "photometric interpretation", "compression", "BitsPerSample", "page", …
	Value  string // the value found, by its TIFF name where it has one: "YCbCr", "12", "IFD 2"
	Code   string // the value's number in the file where Value is a name ("6"), or ""
	Detail string // why it is refused, or what is supported; may be ""
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("tiff: unsupported TIFF %s %q", e.What, e.Value)
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func formatErrorf(format string, a ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, a...)}
}
