package kernels

// What checks_test.go (package kernels_test: it imports
// internal/kerneltest, which imports kernels) uses of the package's own
// test helpers and internals.
var (
	EngineCases         = engineCases
	Sep3Cases           = sep3Cases
	SepTileCases        = sepTileCases
	CheckDirectLaunch   = checkDirectLaunch
	CheckSeparableSteps = checkSeparableSteps
	SeparablePasses     = separablePasses
)
