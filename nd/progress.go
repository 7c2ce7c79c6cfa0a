package nd

// Progress receives how far a long operation has come. Engines call Report
// from several goroutines at once, with done counting units of work (output
// rows, tiles) out of total; implementations must be safe for concurrent use.
type Progress interface {
	Report(done, total int64)
}

// PartProgress reports part i of n of a job to p as a share of the whole:
// the parts run one after another, each reporting as if alone. It is p
// itself when p is nil or n is 1.
func PartProgress(p Progress, i, n int) Progress {
	if p == nil || n == 1 {
		return p
	}
	return partProgress{p, int64(i), int64(n)}
}

type partProgress struct {
	whole Progress
	i, n  int64
}

func (p partProgress) Report(done, total int64) {
	p.whole.Report(p.i*total+done, p.n*total)
}
