package gpu

import (
	"slices"
	"strings"

	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// A method turns a problem into launches on the engine's queue.
type method interface {
	// prepare builds the launches that compute p from in into out and
	// puts their parameters on the device; it returns what it prepared
	// even on error, for the caller to free. Temporaries are temps' where
	// given (as large as temps says), else scratch freed with the launches.
	prepare(e *Engine, p *nd.Problem, in, out Buffer, temps [2]Buffer) (*prepared, error)
	// temps is how many temporaries p's launches use, and their bytes.
	temps(e *Engine, p *nd.Problem) (n, bytes int)
	// describe names the implementations its launches use for p.
	describe(e *Engine, p *nd.Problem) string
	// launches lists p's kernel launches, from e's options and limits
	// alone (not its device).
	launches(e *Engine, p *nd.Problem) ([]*kernels.Launch, error)
}

// prepared is a problem's launches, built and with parameters uploaded.
type prepared struct {
	launches []func() error
	frees    []func()
}

func (pr *prepared) run() error {
	for _, launch := range pr.launches {
		if err := launch(); err != nil {
			return err
		}
	}
	return nil
}

// free returns what the launches hold, once the queue is done with them.
func (pr *prepared) free() {
	for _, f := range pr.frees {
		f()
	}
	pr.frees = nil
}

// kernelMethod is a kernel family as a method: plan lists p's launches as
// steps from the input, through temporaries, to the output (nil: nothing
// to launch). Only the separable family has temporaries.
type kernelMethod struct {
	plan     func(e *Engine, p *nd.Problem) (*kernels.Separable, error)
	hasTemps bool
}

// oneLaunch is a family that plans one launch.
func oneLaunch(plan func(e *Engine, p *nd.Problem) (*kernels.Launch, error)) kernelMethod {
	return kernelMethod{plan: func(e *Engine, p *nd.Problem) (*kernels.Separable, error) {
		l, err := plan(e, p)
		if err != nil || l == nil {
			return nil, err
		}
		return &kernels.Separable{Steps: []kernels.Step{{Launch: l, From: kernels.Input, To: kernels.Output}}}, nil
	}}
}

// The direct method's (kernels.NewDirect) and the separable family's.
var (
	direct = oneLaunch(func(e *Engine, p *nd.Problem) (*kernels.Launch, error) {
		lim := e.plan.Limits()
		return kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: lim.MaxLocalBytes, MaxGroupsYZ: lim.MaxGroupsYZ, MaxParamBytes: lim.MaxParamBytes, Shape: e.opt.Tuning.Shape})
	})
	separable = kernelMethod{hasTemps: true, plan: func(e *Engine, p *nd.Problem) (*kernels.Separable, error) {
		return kernels.NewSeparable(p, e.separableOptions())
	}}
)

// separableOptions are the device's limits and the engine's tuning.
func (e *Engine) separableOptions() kernels.SeparableOptions {
	lim, t := e.plan.Limits(), e.opt.Tuning
	return kernels.SeparableOptions{MaxLocalBytes: lim.MaxLocalBytes, MaxParamBytes: lim.MaxParamBytes, GroupItems: lim.DefaultGroupItems, Shape: t.Shape, FuseSmall: t.FuseSmall}
}

func (m kernelMethod) prepare(e *Engine, p *nd.Problem, in, out Buffer, temps [2]Buffer) (*prepared, error) {
	pr := &prepared{}
	s, err := m.plan(e, p)
	if err != nil || s == nil {
		return pr, err
	}
	buffers := map[kernels.Role]Buffer{kernels.Input: in, kernels.Output: out}
	for i := range s.Temps {
		t := temps[i]
		if t == nil {
			if t, err = e.dev.Scratch(max(s.TempElems*kernels.AccBytes(p), 1)); err != nil {
				return pr, err
			}
			pr.frees = append(pr.frees, func() { t.Free() })
		}
		buffers[kernels.Temp0+kernels.Role(i)] = t
	}
	for _, step := range s.Steps {
		if err := e.prepareLaunch(pr, step.Launch, buffers[step.From], buffers[step.To]); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

func (m kernelMethod) describe(e *Engine, p *nd.Problem) string {
	if s, err := m.plan(e, p); err == nil && s != nil {
		return kernels.Describe(s.Steps)
	}
	return ""
}

func (m kernelMethod) temps(e *Engine, p *nd.Problem) (n, bytes int) {
	if !m.hasTemps {
		return 0, 0
	}
	if s, err := m.plan(e, p); err == nil && s != nil {
		return s.Temps, s.TempElems * kernels.AccBytes(p)
	}
	return 0, 0
}

func (m kernelMethod) launches(e *Engine, p *nd.Problem) ([]*kernels.Launch, error) {
	s, err := m.plan(e, p)
	if err != nil || s == nil {
		return nil, err
	}
	var ls []*kernels.Launch
	for _, step := range s.Steps {
		ls = append(ls, step.Launch)
	}
	return ls, nil
}

// prepareLaunch builds one kernel, checks it against the device, uploads
// its taps and outer-axis table, and adds its launch to pr.
func (e *Engine) prepareLaunch(pr *prepared, l *kernels.Launch, in, out Buffer) error {
	k, err := e.dev.Kernel(l.Family, l.Defines, l.Name)
	if err != nil {
		return err
	}
	if err := e.dev.CheckLaunch(l, k); err != nil {
		return err
	}
	taps := TapsBytes(l)
	var tapsArg any = ByValue(taps)
	if !l.TapsInParams {
		buf, err := e.upload(taps)
		if err != nil {
			return err
		}
		pr.frees = append(pr.frees, func() { buf.Free() })
		tapsArg = buf
	}
	outerTable := nd.AsBytes(l.Outer)
	if len(l.Outer) == 0 {
		outerTable = make([]byte, 4) // an argument buffer is never empty
	}
	outer, err := e.upload(outerTable)
	if err != nil {
		return err
	}
	pr.frees = append(pr.frees, func() { outer.Free() })
	args := LaunchArgs(l, in, out, tapsArg, outer)
	pr.launches = append(pr.launches, func() error { return e.queue.Launch(k, l.Groups, l.Local, args...) })
	return nil
}

// upload copies small host data into a scratch buffer on e's queue (Write
// is done with b when it returns).
func (e *Engine) upload(b []byte) (Buffer, error) {
	buf, err := e.dev.Scratch(max(len(b), 1))
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		if err := e.queue.Write(buf, 0, b); err != nil {
			buf.Free()
			return nil, err
		}
	}
	return buf, nil
}

// TapsBytes returns a launch's weights in its accumulation type, as bytes:
// float64 where l.Wide (ACC_T is double), else rounded to float32.
func TapsBytes(l *kernels.Launch) []byte {
	if l.Wide {
		return nd.AsBytes(l.Taps)
	}
	w := make([]float32, len(l.Taps))
	nd.Load(w, l.Taps, 0)
	return nd.AsBytes(w)
}

// LaunchArgs are the arguments every kernel family takes: in, out, the
// taps (a buffer, or ByValue where l.TapsInParams), the outer-axis table,
// l.Scalars and l.CVal in the accumulation type.
func LaunchArgs(l *kernels.Launch, in, out, taps, outer any) []any {
	args := make([]any, 0, 5+len(l.Scalars))
	args = append(args, in, out, taps, outer)
	for _, v := range l.Scalars {
		args = append(args, v)
	}
	if l.Wide {
		return append(args, l.CVal)
	}
	return append(args, float32(l.CVal))
}

// DefineOptions are defines ("NAME=value") as compiler options: "-D"
// before each not beginning with "-", sorted, so that the same set in
// another order is the same build and cache key.
func DefineOptions(defines []string) []string {
	opts := make([]string, 0, len(defines))
	for _, d := range defines {
		if !strings.HasPrefix(d, "-") {
			d = "-D" + d
		}
		opts = append(opts, d)
	}
	slices.Sort(opts)
	return opts
}
