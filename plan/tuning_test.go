package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// TestTuningCacheFile: entries survive Save and OpenTuningCache; a missing
// file is an empty cache, a damaged one an error naming the file, another
// version's file is ignored; a device that cannot be identified (the CPU)
// has no entries.
func TestTuningCacheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "tuning.json")
	c, err := OpenTuningCache(path)
	if err != nil || c.Len() != 0 {
		t.Fatalf("missing file: %v, %d entries", err, c.Len())
	}
	want := kernels.Tuning{Shape: kernels.TiledShape{TX: 32, TY: 4, RX: 8, RY: 2}}
	c.entries["key"] = want
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenTuningCache(path)
	if err != nil || again.entries["key"] != want {
		t.Fatalf("reopened: %v, %+v", err, again.entries)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTuningCache(path); err == nil {
		t.Error("a damaged cache opened without error")
	}
	if err := os.WriteFile(path, []byte(`{"version": 99, "entries": {"key": {}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := OpenTuningCache(path); err != nil || c.Len() != 0 {
		t.Errorf("another version's cache: %v, %d entries", err, c.Len())
	}
	p, err := (&nd.Spec{Shape: []int{8, 8}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := TuningKey(Device{Kind: "cpu"}, p, Direct); ok {
		t.Error("the CPU has a tuning key")
	}
	if err := c.Store(Device{Kind: "cpu"}, p, Direct, want); err == nil {
		t.Error("stored a tuning for the CPU")
	}
}

// TestTuningCacheCompatible: the caches written before kernels.Tuning held
// one shape (session 25's, committed with its results) open with every
// entry's shape and write back byte for byte, so a user's tuning survives
// the change of type.
func TestTuningCacheCompatible(t *testing.T) {
	for _, name := range []string{"tuning.json", "tuning-after.json"} {
		path := filepath.Join("..", "bench", "results", "2026-11-25-h100-s25", name)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := OpenTuningCache(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() == 0 {
			t.Fatalf("%s: no entries", name)
		}
		families := map[string]bool{}
		for key, e := range c.entries {
			if e.Shape == nil {
				t.Errorf("%s: %s: no shape", name, key)
			}
			families[strings.Fields(e.String())[0]] = true
		}
		c.path = filepath.Join(t.TempDir(), name)
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		again, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, orig) {
			t.Errorf("%s: written back differently (%d bytes, was %d)", name, len(again), len(orig))
		}
		t.Logf("%s: %d entries, families %v", name, c.Len(), families)
	}
	var two kernels.Tuning
	if err := json.Unmarshal([]byte(`{"tiled": {"TX": 8}, "rows": {"TX": 8}}`), &two); err == nil {
		t.Error("a tuning with two shapes was read")
	}
}
