package filters

import (
	"fmt"
	"strings"
)

// SyntaxError reports a spec that is not of the form name[:key=value,…].
type SyntaxError struct {
	Spec string
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("filters: spec %q: %s", e.Spec, e.Msg) }

// UnknownFilterError reports a filter name that Parse does not know.
type UnknownFilterError struct {
	Name string
}

func (e *UnknownFilterError) Error() string {
	return fmt.Sprintf("filters: unknown filter %q (known: %s)", e.Name, strings.Join(Names(), ", "))
}

// ParameterError reports a parameter that is unknown, missing, repeated or
// has a value the filter cannot use (also one that does not fit the rank
// Build was given, or that would make the kernel too large).
type ParameterError struct {
	Filter string // the canonical filter name (the whole spec where the values together are at fault)
	Param  string // the parameter as written in a spec ("sigma", "axis")
	Value  string // the offending value as written, or "" when there is none
	Msg    string
}

func (e *ParameterError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("filters: %s: %s: %s", e.Filter, e.Param, e.Msg)
	}
	return fmt.Sprintf("filters: %s: %s=%s: %s", e.Filter, e.Param, e.Value, e.Msg)
}

// RankError reports a filter that cannot span the number of axes Build was
// given: a Gabor kernel is 2-D, and every filter spans 1 to nd.MaxRank axes.
type RankError struct {
	Filter string
	Rank   int
	Msg    string
}

func (e *RankError) Error() string {
	return fmt.Sprintf("filters: %s cannot span %d axes: %s", e.Filter, e.Rank, e.Msg)
}
