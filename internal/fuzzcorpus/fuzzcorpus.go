// Package fuzzcorpus keeps a fuzz target's committed seed corpus
// (testdata/fuzz/<target>, which go test runs as ordinary test cases) in
// step with the seeds a package's tests build, for every package with a
// fuzz target.
package fuzzcorpus

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Check reports each seed whose file in testdata/fuzz/target is missing or
// differs. With update it rewrites the directory to hold exactly the seeds,
// removing stale ones.
func Check(t testing.TB, target string, seeds map[string][]byte, update bool) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range seeds {
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		path := filepath.Join(dir, name)
		if update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is missing or stale (%v); run go test -run TestFuzzCorpus -update", path, err)
		}
	}
}
