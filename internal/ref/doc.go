// Package ref is ndconv's oracle: scipy.ndimage's correlate and convolve,
// written as the obvious loops over the definition in DESIGN.md §1, in
// float64, with no tiling, no separability and no specialisation. It is slow
// on purpose and exists only so that every engine path can be tested against
// it.
//
// It reads a Spec as the user states it (convolve, origin, axes, mode) and
// deliberately does not use nd.Spec.Normalize, so that a mistake in the
// normalisation shows up as a disagreement. It shares only the border rule
// (nd.Border.Index), which is itself tested against scipy's table.
package ref
