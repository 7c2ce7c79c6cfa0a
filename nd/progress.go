package nd

// Progress receives how far a long operation has come. Engines call Report
// from several goroutines at once, with done counting units of work (output
// rows, tiles) out of total; implementations must be safe for concurrent use.
type Progress interface {
	Report(done, total int64)
}
