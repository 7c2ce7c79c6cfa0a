package cpu

import (
	"context"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// methods are the CPU methods under test, each with the cases it supports.
var methods = []struct {
	name     string
	new      func(*nd.Problem, Options) Executable
	supports func(*nd.Problem) bool
}{
	{"direct", NewDirect, func(*nd.Problem) bool { return true }},
	{"separable", func(p *nd.Problem, o Options) Executable {
		e, err := NewSeparable(p, o)
		if err != nil {
			panic(err)
		}
		return e
	}, (*nd.Problem).Separable},
}

func runCase(t *testing.T, c enginetest.Case, workers int) {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatalf("normalize: %v", err)
	}
	want := c.Want()
	for _, m := range methods {
		if !m.supports(p) {
			continue
		}
		dst, err := nd.New(p.Out, p.FullShape()...)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.new(p, Options{Workers: workers}).Execute(context.Background(), dst, c.Input); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if msg := c.Check(dst, want); msg != "" {
			t.Errorf("%s, %d workers: %s", m.name, workers, msg)
		}
	}
}

func TestTable(t *testing.T) {
	for _, c := range enginetest.Table() {
		t.Run(c.Name, func(t *testing.T) { runCase(t, c, 3) })
	}
}

func TestRandom(t *testing.T) {
	for _, c := range enginetest.Random(1, 300) {
		t.Run(c.Name, func(t *testing.T) { runCase(t, c, 1+len(c.Name)%3) })
	}
}
