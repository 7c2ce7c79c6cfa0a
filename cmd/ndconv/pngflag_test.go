package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// TestPNGCompressionFlag: --png-compression sets the zlib level of a .png
// output (0 stores, 9 is smallest), every level gives the same pixels, and
// a level out of 0–9 is a usage error naming the flag.
func TestPNGCompressionFlag(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Uint8, 64, 48, 3))
	writeText(t, filepath.Join(dir, "k.csv"), "1\n")
	size := map[string]int64{}
	var first nd.Array
	for _, level := range []string{"", "0", "1", "6", "9"} {
		out := "out" + level + ".png"
		args := []string{"correlate", "-q", "-k", "k.csv", "in.npy", out}
		if level != "" {
			args = append(args, "--png-compression", level)
		}
		if code, _, stderr := ndconvCLI(t, dir, args...); code != 0 {
			t.Fatalf("level %q: exit %d: %s", level, code, stderr)
		}
		a, _, err := imageio.ReadFile(filepath.Join(dir, out), imageio.RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if level == "" {
			first = a
		} else if !slices.Equal(a.Data.([]uint8), first.Data.([]uint8)) {
			t.Errorf("level %s gives other pixels", level)
		}
		fi, err := os.Stat(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		size[level] = fi.Size()
	}
	if size[""] != size["1"] || size["0"] <= size["9"] || size["0"] < 64*48*3 {
		t.Errorf("sizes by level: %v; want the default to be level 1 and level 0 stored", size)
	}
	for _, bad := range []string{"10", "-1"} {
		code, _, stderr := ndconvCLI(t, dir, "correlate", "-q", "-k", "k.csv", "in.npy", "bad.png", "--png-compression", bad)
		if code != 2 || !strings.Contains(stderr, "--png-compression") {
			t.Errorf("--png-compression %s: exit %d, %q", bad, code, stderr)
		}
	}
}
