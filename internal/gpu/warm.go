package gpu

import (
	"context"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// Method names an engine's method for Pending.
type Method int

const (
	Direct Method = iota
	Separable
	FFT
	Gemm
	Winograd
)

// Pending counts the kernels an engine of method m for p would build that
// are neither built in this process nor cached (one for the FFT method),
// so that a warm-up can say what it will cost; dev need not be open.
func Pending(dev Planner, m Method, p *nd.Problem, opt Options) (int, error) {
	var meth method
	switch m {
	case FFT:
		return 1, nil
	case Gemm:
		meth = gemm
	case Winograd:
		meth = winogradTile(winograd.TileFromEnv())
	case Separable:
		if !p.Separable() {
			return 0, nil
		}
		meth = separable
	default:
		meth = direct
	}
	e := &Engine{plan: dev, p: p, opt: opt, method: meth} // no device: options only
	chunks, err := e.chunks()
	if err != nil {
		return 0, err
	}
	launches, err := e.chunkLaunches(chunks)
	if err != nil {
		return 0, err
	}
	return dev.Missing(launches)
}

// chunkLaunches lists the launches of each chunk geometry once.
func (e *Engine) chunkLaunches(chunks []chunk.Chunk) ([]*kernels.Launch, error) {
	var all []*kernels.Launch
	var geometries []*nd.Problem
	for _, c := range chunks {
		if slices.ContainsFunc(geometries, func(q *nd.Problem) bool { return chunk.SameGeometry(q, c.Problem) }) {
			continue
		}
		geometries = append(geometries, c.Problem)
		ls, err := e.method.launches(e, c.Problem)
		if err != nil {
			return nil, err
		}
		all = append(all, ls...)
	}
	return all, nil
}

// Compile builds every kernel the engine's executions launch, so that the
// first execution pays none of it.
func (e *Engine) Compile() error {
	err := e.begin(context.Background(), true)
	defer e.mu.Unlock()
	if err != nil {
		return err
	}
	launches, err := e.chunkLaunches(e.pieces)
	if err != nil {
		return err
	}
	for _, l := range launches {
		if _, err := e.dev.Kernel(l.Family, l.Defines, l.Name); err != nil {
			return err
		}
	}
	return nil
}
