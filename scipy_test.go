package ndconv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

// fixtureCase is one entry of testdata/scipy/manifest.json, written by
// scripts/scipy_fixtures.py.
type fixtureCase struct {
	Name     string     `json:"name"`
	Func     string     `json:"func"`
	Input    string     `json:"input"`
	Kernels  []string   `json:"kernels"`
	Factors  [][]string `json:"factors"`
	Border   string     `json:"border"`
	CVal     float64    `json:"cval"`
	Origin   []int      `json:"origin"`
	Mode     string     `json:"mode"`
	Axes     []int      `json:"axes"`
	DType    *string    `json:"dtype"`
	Expected string     `json:"expected"`
}

func loadFixtures(t *testing.T) []fixtureCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/scipy/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Cases []fixtureCase }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) < 100 {
		t.Fatalf("only %d fixture cases", len(m.Cases))
	}
	return m.Cases
}

func readFixture(t *testing.T, name string) nd.Array {
	t.Helper()
	a, err := imageio.ReadNPYFile(filepath.Join("testdata/scipy", name))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readVector(t *testing.T, name string) []float64 {
	return readFixture(t, name).Float64s()
}

// fixtureProblem is a fixture's operation on its input: the options and
// kernels for NewPlan, and the case with scipy's values as its want (after
// checking the reference oracle against them).
type fixtureProblem struct {
	op      ndconv.Operation
	in      nd.Array
	opt     ndconv.Options
	kernels []ndconv.Kernel
	c       enginetest.Case
	want    ref.Result
}

func loadFixtureProblem(t *testing.T, fc fixtureCase) fixtureProblem {
	t.Helper()
	in := readFixture(t, fc.Input)
	var kernels []ndconv.Kernel
	for _, k := range fc.Kernels {
		a := readFixture(t, k)
		kernels = append(kernels, ndconv.NewKernel(a.Shape, a.Float64s()))
	}
	if fc.Factors != nil {
		var fs [][]float64
		for _, f := range fc.Factors[0] {
			fs = append(fs, readVector(t, f))
		}
		kernels = []ndconv.Kernel{ndconv.SeparableKernel(fs...)}
	}
	opt := ndconv.Options{CVal: fc.CVal, Origin: fc.Origin, Axes: fc.Axes}
	var err error
	if opt.Border, err = nd.ParseBorder(fc.Border); err != nil {
		t.Fatal(err)
	}
	if opt.Mode, err = nd.ParseMode(fc.Mode); err != nil {
		t.Fatal(err)
	}
	if fc.DType != nil {
		if opt.DType, err = nd.ParseDType(*fc.DType); err != nil {
			t.Fatal(err)
		}
	}
	op := ndconv.Correlation
	if fc.Func == "convolve" {
		op = ndconv.Convolution
	}
	expected := readFixture(t, fc.Expected)
	spec := nd.Spec{Shape: in.Shape, In: in.DType(), Out: opt.DType, Kernels: kernels, Axes: opt.Axes,
		Origin: opt.Origin, Border: opt.Border, CVal: opt.CVal, Mode: opt.Mode, Convolve: op == ndconv.Convolution}
	oracle := ref.Correlate(spec, in.Float64s())
	want := ref.Result{Shape: expected.Shape, Values: expected.Float64s(), Magnitude: oracle.Magnitude}
	for i, v := range want.Values {
		if !sameValue(oracle.Values[i], v, 1e-12*oracle.Magnitude[i]) {
			t.Fatalf("reference disagrees with scipy at %d: %v vs %v", i, oracle.Values[i], v)
		}
	}
	return fixtureProblem{op: op, in: in, opt: opt, kernels: kernels, c: enginetest.Case{Spec: spec, Input: in}, want: want}
}

// plan is the fixture's plan with opt on the host, or nil where opt asks
// for the separable method and the kernel is not rank-1.
func (f fixtureProblem) plan(t *testing.T, opt ndconv.Options, what string) *ndconv.Plan {
	t.Helper()
	plan, err := ndconv.NewPlan(f.op, f.in.Shape, f.in.DType(), opt, f.kernels...)
	var ae *nd.ArgumentError
	if opt.Method == ndconv.Separable && errors.As(err, &ae) {
		return nil // not rank-1
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return plan
}

// TestScipyFixtures runs every scipy fixture through every method that can
// take it, and checks the reference oracle against scipy too.
func TestScipyFixtures(t *testing.T) {
	for _, fc := range loadFixtures(t) {
		t.Run(fc.Name, func(t *testing.T) {
			f := loadFixtureProblem(t, fc)
			for _, method := range []ndconv.Method{ndconv.Auto, ndconv.Direct, ndconv.Separable} {
				opt := f.opt
				opt.Method = method
				plan := f.plan(t, opt, fmt.Sprint(method))
				if plan == nil {
					continue
				}
				got, err := plan.Execute(context.Background(), ndconv.Array{}, f.in)
				if err != nil {
					t.Fatalf("%v: %v", method, err)
				}
				if msg := f.c.Check(got, f.want); msg != "" {
					t.Errorf("%v (%v): %s", method, plan.Method(), msg)
				}
			}
		})
	}
}

// TestScipyFixturesOnDevices runs the scipy fixtures on each GPU device
// (CUDA, OpenCL) with the exact methods, direct and separable where the
// kernel is rank-1, against scipy's values and the CPU's bits. On OpenCL a
// sample of every sixteenth fixture runs (PoCL builds each specialisation in
// seconds; NDCONV_OPENCL_ALL=1 runs all). Same bits: NaN payloads aside, as
// gputest.SameBits.
func TestScipyFixturesOnDevices(t *testing.T) {
	fixtures := loadFixtures(t)
	for _, name := range testDevices(t) {
		if name == "cpu" {
			continue
		}
		dev, err := ndconv.OpenDevice(name)
		if err != nil {
			t.Fatalf("OpenDevice(%q): %v", name, err)
		}
		step := 1
		if name == "opencl" && os.Getenv("NDCONV_OPENCL_ALL") != "1" {
			step = 16
		}
		// The plans on the CPU are made here (they may end the test); the
		// device's plans, which build kernels, run gputest.Workers at once.
		type job struct {
			what string
			f    fixtureProblem
			opt  ndconv.Options
			host *ndconv.Plan
		}
		var jobs []job
		for i := 0; i < len(fixtures); i += step {
			fc := fixtures[i]
			f := loadFixtureProblem(t, fc)
			for _, method := range []ndconv.Method{ndconv.Direct, ndconv.Separable} {
				what := fmt.Sprintf("%s/%s/%v", name, fc.Name, method)
				opt := f.opt
				opt.Method, opt.Exact = method, true
				if host := f.plan(t, opt, what); host != nil {
					jobs = append(jobs, job{what, f, opt, host})
				}
			}
		}
		failures := gputest.Each(len(jobs), gputest.Workers(), func(i int) string {
			j := jobs[i]
			want, err := j.host.Execute(context.Background(), ndconv.Array{}, j.f.in)
			if err != nil {
				return fmt.Sprintf("%s: CPU: %v", j.what, err)
			}
			p, err := dev.NewPlan(j.f.op, j.f.in.Shape, j.f.in.DType(), j.opt, j.f.kernels...)
			if err != nil {
				return fmt.Sprintf("%s: %v", j.what, err)
			}
			defer p.Close()
			got, err := p.Execute(context.Background(), ndconv.Array{}, j.f.in)
			if err != nil {
				return fmt.Sprintf("%s: %v", j.what, err)
			}
			if msg := j.f.c.Check(got, j.f.want); msg != "" {
				return j.what + ": " + msg
			}
			if msg := gputest.SameBits(got, want); msg != "" {
				return j.what + ": " + msg
			}
			return ""
		})
		for _, f := range failures {
			t.Error(f)
		}
		runs := len(jobs)
		t.Logf("%s: %d fixture runs", name, runs)
		if runs == 0 {
			t.Errorf("%s: no fixture ran", name)
		}
	}
}

func sameValue(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol
}
