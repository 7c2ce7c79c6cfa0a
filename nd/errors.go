package nd

import "fmt"

// ArgumentError reports a request that cannot be carried out as given: an
// origin out of range, a repeated axis, a kernel larger than the input in
// valid mode. Arg names the offending argument as a user would write it.
type ArgumentError struct {
	Arg string // "origin", "axes", "kernel", "shape", …
	Msg string
}

func (e *ArgumentError) Error() string { return "invalid " + e.Arg + ": " + e.Msg }

func argErrorf(arg, format string, a ...any) error {
	return &ArgumentError{Arg: arg, Msg: fmt.Sprintf(format, a...)}
}

// UnsupportedError reports a value ndconv does not support (yet), such as a
// complex dtype or an unknown border name.
type UnsupportedError struct {
	What      string // "dtype", "border", "mode", …
	Value     string
	Supported string // the accepted values, for the message
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("unsupported %s %q", e.What, e.Value)
	if e.Supported != "" {
		msg += " (supported: " + e.Supported + ")"
	}
	return msg
}
