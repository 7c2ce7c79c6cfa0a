package zarr

import (
	"errors"
	"fmt"
)

// ErrNotFound is what a Store returns (wrapped or as it is) for a key it
// does not hold. A missing chunk is no error to the array: it reads as the
// fill value.
var ErrNotFound = errors.New("zarr: key not found")

// FormatError reports stored bytes that are not valid Zarr: metadata that
// is not the JSON the spec asks for, a chunk that does not decode to its
// size, a shard index that points outside its shard, a checksum that does
// not match.
type FormatError struct {
	Key string // the store key whose bytes are wrong: "a/zarr.json", "a/c/0/1"
	Msg string // what is wrong
	Err error  // the underlying cause, or nil
}

func (e *FormatError) Error() string {
	msg := "zarr: invalid " + e.Key + ": " + e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError reports valid Zarr that this package does not handle: a
// codec, a data type or a chunk grid it does not know.
type UnsupportedError struct {
	Key       string // the metadata key: "a/zarr.json"
	What      string // "codec", "data type", …
	Value     string
	Supported string // the accepted values, or ""
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("zarr: %s: unsupported %s %q", e.Key, e.What, e.Value)
	if e.Supported != "" {
		msg += " (supported: " + e.Supported + ")"
	}
	return msg
}

// ArgumentError reports a call that cannot be carried out as given: a
// region outside the array, a destination of the wrong shape or type, a
// write that is not aligned with the chunk grid.
type ArgumentError struct {
	Arg string // "region", "dst", "meta", …
	Msg string
}

func (e *ArgumentError) Error() string { return "zarr: invalid " + e.Arg + ": " + e.Msg }

func argErrorf(arg, format string, a ...any) error {
	return &ArgumentError{Arg: arg, Msg: fmt.Sprintf(format, a...)}
}

func formatErrorf(key string, err error, format string, a ...any) error {
	return &FormatError{Key: key, Msg: fmt.Sprintf(format, a...), Err: err}
}
