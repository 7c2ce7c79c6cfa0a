package nifti

import "fmt"

// FormatError reports input that is not a valid NIfTI-1 file: a truncated
// or corrupt header or data, impossible dimensions, a bad vox_offset.
type FormatError struct {
	Msg string // what is wrong: "truncated header (100 of 348 bytes)"
	Err error  // the underlying cause, such as io.ErrUnexpectedEOF, or nil
}

func (e *FormatError) Error() string {
	msg := "nifti: invalid file: " + e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError reports a valid file, or an array to write, that this
// package cannot represent: NIfTI-2, a .hdr/.img pair, a complex datatype,
// an array of rank 8.
type UnsupportedError struct {
	What   string // "datatype", "format", "array rank", …
	Value  string // the value as found: "complex64 (32)", "NIfTI-2", "8"
	Detail string // why it is refused, or what to do instead; may be ""
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("nifti: unsupported %s %q", e.What, e.Value)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func formatErrorf(err error, format string, a ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, a...), Err: err}
}
