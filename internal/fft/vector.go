package fft

// passFunc is one whole Stockham pass over vl sequences in the vector
// layout (vl a multiple of vectorLanes), as the assembly passes of
// passes_amd64.s take it: tw the stage's twiddles of the direction, c its
// constants (stage.constants).
type passFunc func(dst, src, tw []complex64, c []float32, m, ns, vl int)

// vectorLanes is the multiple of sequences the SIMD passes need.
const vectorLanes = 8

// simdSet is one instruction set's passes and spectrum product.
type simdSet struct {
	name   string
	passes map[int]passFunc
	mul    func(dst, a, b []complex64)
}

// simdSets lists the instruction sets this CPU runs the assembly in,
// widest first (none under noasm or on other architectures).
var simdSets []simdSet

// vectorPasses holds the SIMD passes this CPU runs, by radix; empty under
// the noasm tag, on other architectures and on CPUs without AVX2 and FMA,
// and the radices it lacks run the pure-Go passes.
var vectorPasses map[int]passFunc

// mulSpectra, when set, is MulInto over the whole vectors of dst; MulInto
// does the rest.
var mulSpectra func(dst, a, b []complex64)

// lanesFor returns the stride, at least g, at which g sequences are laid
// out in the vector layout: a multiple of vectorLanes where the SIMD
// passes run, so that they take every pass.
func lanesFor(g int) int {
	if len(vectorPasses) == 0 {
		return g
	}
	return (g + vectorLanes - 1) / vectorLanes * vectorLanes
}
