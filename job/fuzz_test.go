package job

import (
	"context"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics, and a plan it accepts marshals to a plan
// that parses to the same hash and blocks.
func FuzzParse(f *testing.F) {
	j := newTestJob(f, 9)
	s, err := New(context.Background(), j.config(filepath.Join(j.dir, "in.zarr"), filepath.Join(j.dir, "out.zarr")))
	if err != nil {
		f.Fatal(err)
	}
	s.Close()
	data, err := s.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"version": 1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		again, err := p.Marshal()
		if err != nil {
			t.Fatalf("a parsed plan does not marshal: %v", err)
		}
		q, err := Parse(again)
		if err != nil || q.Hash != p.Hash || q.Blocks() != p.Blocks() {
			t.Fatalf("a parsed plan marshals to another: %v", err)
		}
		for i := range min(p.Blocks(), 1000) {
			p.Box(i)
		}
	})
}
