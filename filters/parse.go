package filters

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// kind is one filter name Parse knows: its canonical name, aliases, the
// parameters its spec takes (in canonical order) and how it reads them.
type kind struct {
	name    string
	aliases []string
	params  []string
	read    func(r *reader) Named
}

var kinds = []kind{
	{"gaussian", nil, []string{"sigma", "order", "truncate"}, func(r *reader) Named {
		r.require("sigma")
		return Gaussian{Sigma: r.floats("sigma"), Order: r.ints("order"), Truncate: r.positive("truncate")}
	}},
	{"uniform", nil, []string{"size"}, func(r *reader) Named {
		return Uniform{Size: r.ints("size")}
	}},
	{"sobel", nil, []string{"axis"}, func(r *reader) Named { return Sobel{Axis: r.axis()} }},
	{"prewitt", nil, []string{"axis"}, func(r *reader) Named { return Prewitt{Axis: r.axis()} }},
	{"scharr", nil, []string{"axis"}, func(r *reader) Named { return Scharr{Axis: r.axis()} }},
	{"laplace", nil, nil, func(r *reader) Named { return Laplace{} }},
	{"log", []string{"gaussian_laplace", "gaussian-laplace"}, []string{"sigma", "truncate"}, func(r *reader) Named {
		r.require("sigma")
		return GaussianLaplace{Sigma: r.floats("sigma"), Truncate: r.positive("truncate")}
	}},
	{"gradient-magnitude", []string{"gaussian_gradient_magnitude", "gaussian-gradient-magnitude", "gradient_magnitude", "ggm"},
		[]string{"sigma", "truncate"}, func(r *reader) Named {
			r.require("sigma")
			return GaussianGradientMagnitude{Sigma: r.floats("sigma"), Truncate: r.positive("truncate")}
		}},
	{"gabor", nil, gaborParams, func(r *reader) Named { return r.gabor() }},
	{"gabor-bank", []string{"gabor_bank"}, append([]string{"orientations"}, gaborParams...), func(r *reader) Named {
		r.require("orientations")
		n := r.integer("orientations", 0)
		return GaborBank{Gabor: r.gabor(), Orientations: n}
	}},
}

var gaborParams = []string{"frequency", "theta", "bandwidth", "sigma_x", "sigma_y", "n_stds", "offset"}

// Names returns the canonical names of the filters Parse knows, for help
// text and error messages. Parse also accepts the aliases each type's
// documentation lists.
func Names() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// Parse reads a filter spec, name[:key=value,key=value…], for example
// "gaussian:sigma=2", "gaussian:sigma=2x1,order=0x1,truncate=3",
// "uniform:size=5", "sobel:axis=0", "laplace", "log:sigma=1.5",
// "gabor:frequency=0.2,theta=0.5", "gabor-bank:orientations=8,frequency=0.2".
// A per-axis list is written with x. Parse checks every value that does not
// depend on the rank; Build checks the rest. Errors are a *SyntaxError, an
// *UnknownFilterError or a *ParameterError.
func Parse(spec string) (Named, error) {
	text := strings.TrimSpace(spec)
	if text == "" {
		return nil, &SyntaxError{Spec: spec, Msg: "empty (want name[:key=value,…], name one of " + strings.Join(Names(), ", ") + ")"}
	}
	name, params, hasParams := strings.Cut(text, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return nil, &SyntaxError{Spec: spec, Msg: "no filter name before the colon"}
	}
	k, ok := lookup(name)
	if !ok {
		return nil, &UnknownFilterError{Name: name}
	}
	r := &reader{filter: k.name, values: map[string]string{}}
	if hasParams {
		for _, p := range strings.Split(params, ",") {
			key, value, ok := strings.Cut(p, "=")
			if !ok {
				return nil, &SyntaxError{Spec: spec, Msg: fmt.Sprintf("parameter %q is not key=value", strings.TrimSpace(p))}
			}
			key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "-", "_")
			value = strings.TrimSpace(value)
			if !slices.Contains(k.params, key) {
				return nil, &ParameterError{Filter: k.name, Param: key, Msg: "unknown parameter (" + takes(k) + ")"}
			}
			if _, seen := r.values[key]; seen {
				return nil, &ParameterError{Filter: k.name, Param: key, Msg: "given twice"}
			}
			if value == "" {
				return nil, &ParameterError{Filter: k.name, Param: key, Msg: "no value after ="}
			}
			r.values[key] = value
		}
	}
	n := k.read(r)
	if r.err != nil {
		return nil, r.err
	}
	if err := n.(checker).check(); err != nil {
		return nil, err
	}
	return n, nil
}

func lookup(name string) (kind, bool) {
	for _, k := range kinds {
		if k.name == name || slices.Contains(k.aliases, name) {
			return k, true
		}
	}
	return kind{}, false
}

// takes lists a filter's parameters for an error message.
func takes(k kind) string {
	if len(k.params) == 0 {
		return k.name + " takes no parameters"
	}
	return k.name + " takes " + strings.Join(k.params, ", ")
}

// reader reads a spec's parameter values, keeping the first error; after
// one, every read returns a zero value.
type reader struct {
	filter string
	values map[string]string
	err    error
}

func (r *reader) fail(param, msg string) {
	if r.err == nil {
		r.err = &ParameterError{Filter: r.filter, Param: param, Value: r.values[param], Msg: msg}
	}
}

func (r *reader) require(param string) {
	if _, ok := r.values[param]; !ok && r.err == nil {
		r.err = &ParameterError{Filter: r.filter, Param: param, Msg: "required"}
	}
}

func (r *reader) floats(param string) []float64 {
	return readList(r, param, "a finite number", func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(s, 64)
		return v + 0, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) // + 0: no negative zero
	})
}

func (r *reader) ints(param string) []int {
	return readList(r, param, "an integer", func(s string) (int, bool) {
		v, err := strconv.Atoi(s)
		return v, err == nil
	})
}

// readList reads a per-axis list, each part by parse; nil when absent.
func readList[T any](r *reader, param, what string, parse func(string) (T, bool)) []T {
	v, ok := r.values[param]
	if !ok || r.err != nil {
		return nil
	}
	parts := strings.Split(v, "x")
	out := make([]T, len(parts))
	for i, p := range parts {
		if out[i], ok = parse(strings.TrimSpace(p)); !ok {
			r.fail(param, fmt.Sprintf("%q is not %s", p, what))
			return nil
		}
	}
	return out
}

// scalar returns the one value of a parameter that takes one.
func scalar[T any](r *reader, param string, values []T) (T, bool) {
	var zero T
	if len(values) == 0 {
		return zero, false
	}
	if len(values) > 1 {
		r.fail(param, "takes one value, not a per-axis list")
		return zero, false
	}
	return values[0], true
}

func (r *reader) float(param string) float64 {
	v, _ := scalar(r, param, r.floats(param))
	return v
}

func (r *reader) integer(param string, def int) int {
	if v, ok := scalar(r, param, r.ints(param)); ok {
		return v
	}
	return def
}

// positive reads a parameter whose zero value means its default, so that
// a 0 written in a spec would be silently replaced: it must be > 0.
func (r *reader) positive(param string) float64 {
	v := r.float(param)
	if _, given := r.values[param]; given && r.err == nil && !(v > 0) {
		r.fail(param, "must be positive")
	}
	return v
}

func (r *reader) axis() int { return r.integer("axis", defaultAxis) }

func (r *reader) gabor() Gabor {
	r.require("frequency")
	return Gabor{
		Frequency: r.positive("frequency"),
		Theta:     r.float("theta"),
		Bandwidth: r.positive("bandwidth"),
		SigmaX:    r.positive("sigma_x"),
		SigmaY:    r.positive("sigma_y"),
		NStds:     r.positive("n_stds"),
		Offset:    r.float("offset"),
	}
}

// specWriter writes a canonical spec: the name, then key=value pairs in the
// filter's parameter order, leaving out values that are the default.
type specWriter struct {
	b      strings.Builder
	params int
}

func newSpec(name string) *specWriter {
	w := &specWriter{}
	w.b.WriteString(name)
	return w
}

func (w *specWriter) add(key, value string) {
	if w.params == 0 {
		w.b.WriteByte(':')
	} else {
		w.b.WriteByte(',')
	}
	w.params++
	w.b.WriteString(key + "=" + value)
}

// floats writes a per-axis list; nil (the default) is left out.
func (w *specWriter) floats(key string, v []float64) {
	if v != nil {
		w.add(key, joinX(v))
	}
}

// ints writes a per-axis list; nil (the default) is left out.
func (w *specWriter) ints(key string, v []int) {
	if v != nil {
		w.add(key, joinX(v))
	}
}

// float writes a value whose zero means the default; zero is left out.
func (w *specWriter) float(key string, v float64) {
	if v != 0 {
		w.add(key, fmt.Sprint(v))
	}
}

// int writes a value always.
func (w *specWriter) int(key string, v int) { w.add(key, fmt.Sprint(v)) }

func (w *specWriter) String() string { return w.b.String() }
