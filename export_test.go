package ndconv

import "time"

// SetBlockTrace sets ExecuteBlocks' trace hook for the external tests
// (nil: none).
func SetBlockTrace(f func(stage string, d time.Duration)) { blockTrace = f }

// PlanarSinkForTest is ExecuteBlocks' sink for a planar bank of bank
// kernels, in front of a sink that takes nothing.
func PlanarSinkForTest(bank int) BlockSink { return &planarSink{sink: nil, bank: bank} }
