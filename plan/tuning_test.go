package plan

import (
	"os"
	"path/filepath"
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
	want := kernels.Tuning{Tiled: kernels.TiledShape{TX: 32, TY: 4, RX: 8, RY: 2}}
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
