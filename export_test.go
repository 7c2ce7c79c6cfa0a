package ndconv

import "time"

// SetBlockTrace sets ExecuteBlocks' trace hook for the external tests
// (nil: none).
func SetBlockTrace(f func(stage string, d time.Duration)) { blockTrace = f }
