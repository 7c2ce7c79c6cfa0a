package opencl

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// What a planner asks before it chooses a device (cuda/warm.go's twin):
// which programs an engine would still have to build, without a context.

// DirectPending counts the programs an engine from NewDirect(p, opt) would
// build from source for its executions from host memory: those neither
// built on the open device nor in the disk cache (CacheDir). It lists the
// devices (Devices), and makes no context.
func DirectPending(p *nd.Problem, opt EngineOptions) (int, error) {
	return pending(p, opt, "direct")
}

// SeparablePending is DirectPending for NewSeparable.
func SeparablePending(p *nd.Problem, opt EngineOptions) (int, error) {
	if !p.Separable() {
		return 0, nil
	}
	return pending(p, opt, "separable")
}

func pending(p *nd.Problem, opt EngineOptions, family string) (int, error) {
	infos, err := Devices()
	if err != nil {
		return 0, err
	}
	i := slices.IndexFunc(infos, func(i Info) bool { return i.Platform == opt.Platform && i.Device == opt.Device })
	if i < 0 {
		return 0, fmt.Errorf("opencl: no device opencl:%d:%d", opt.Platform, opt.Device)
	}
	info := infos[i]
	launches, err := launchesOf(p, info, opt, family)
	if err != nil {
		return 0, err
	}
	var built *programCache // nil: no device open, nothing in memory
	if d, ok := registry.Lookup([2]int{opt.Platform, opt.Device}); ok {
		built = &d.programs
	}
	keys := make([]gpucache.Key, 0, len(launches))
	for _, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return 0, err
		}
		options, err := buildOptions(l.Defines)
		if err != nil {
			return 0, err
		}
		keys = append(keys, programKeyOf(src, options, info))
	}
	return built.Missing(programStore, keys), nil
}

// launchesOf lists the launches of an engine of family for p on the device
// info describes, one set per chunk geometry of its executions.
func launchesOf(p *nd.Problem, info Info, opt EngineOptions, family string) ([]*kernels.Launch, error) {
	chunks, err := chunksOf(p, info, opt, family)
	if err != nil {
		return nil, err
	}
	var all []*kernels.Launch
	var geometries []*nd.Problem
	for _, c := range chunks {
		q := c.Problem
		if slices.ContainsFunc(geometries, func(g *nd.Problem) bool { return chunk.SameGeometry(g, q) }) {
			continue
		}
		geometries = append(geometries, q)
		if family == "separable" {
			s, err := kernels.NewSeparable(q, separableOptions(info, opt.Tuning))
			if err != nil || s == nil {
				return nil, err
			}
			for _, step := range s.Steps {
				all = append(all, step.Launch)
			}
			continue
		}
		l, err := kernels.NewDirect(q, directOptions(info, opt.Tuning))
		if err != nil {
			return nil, err
		}
		if l != nil {
			all = append(all, l)
		}
	}
	return all, nil
}

// Compile builds now, or loads from the disk cache, every program the
// engine's executions from host memory will use, so that the first Execute
// finds them ready: a caller that knows the problem before its data (an
// input file's header) overlaps the builds with the read.
func (e *Engine) Compile() error {
	launches, err := launchesOf(e.p, e.dev.Info(), e.opt, e.family)
	if err != nil {
		return err
	}
	return gpu.BuildAll(launches, func(src string, l *kernels.Launch) error {
		_, err := e.dev.Program(src, l.Family, l.Defines)
		return err
	})
}
