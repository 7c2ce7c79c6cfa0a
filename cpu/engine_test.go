package cpu

import (
	"bytes"
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

// TestSeparableChunked forces the separable method's chunking with a small
// scratch limit and checks that the chunked result equals the whole one,
// bit for bit.
func TestSeparableChunked(t *testing.T) {
	defer func(l int64) { separableScratchLimit = l }(separableScratchLimit)
	split := 0
	for _, c := range append(enginetest.Table(), enginetest.Random(3, 100)...) {
		p, err := c.Spec.Normalize()
		if err != nil || !p.Separable() {
			continue
		}
		want, _ := nd.New(p.Out, p.FullShape()...)
		whole, _ := newWholeSeparable(p, Options{Workers: 2})
		if err := whole.Execute(context.Background(), want, c.Input); err != nil {
			t.Fatal(err)
		}
		separableScratchLimit = max(separableScratch(p)/3, 1)
		e, err := NewSeparable(p, Options{Workers: 2})
		separableScratchLimit = 256 << 20
		if err != nil {
			continue // one voxel's halo needs more: refused
		}
		if ch, ok := e.(*chunked); ok && len(ch.chunks) > 1 {
			split++
		}
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), got, c.Input); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: chunked differs from whole", c.Name)
		}
	}
	if split < 10 {
		t.Errorf("only %d cases ran in several chunks", split)
	}
	t.Logf("%d cases in several chunks", split)
}
