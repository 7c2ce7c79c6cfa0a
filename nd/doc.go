// Package nd is the lowest layer of ndconv: it owns the n-dimensional Array and
// its element types (DType), the border rules that extend an array beyond its
// edges, the conversion and rounding of values between element types, and the
// validation and normalisation of a filtering request (Spec) into the Problem
// that every engine executes.
//
// Everything that must mean the same thing in every engine lives here once:
// the reference (internal/ref), the CPU engine and the code that specialises
// GPU kernels all map border indices with Border.Index, convert with Load and
// Store, and read the same normalised Problem. Nothing here imports another
// ndconv package.
//
// Conventions: arrays are C-order (last axis fastest); shapes are []int with
// the slowest axis first; a slice written by a function is named dst.
package nd
