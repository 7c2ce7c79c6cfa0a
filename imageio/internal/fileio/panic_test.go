package fileio

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomicPanicLeavesNothing: a panic in the write callback goes on
// up, and neither the output nor the temporary file is left behind.
func TestWriteAtomicPanicLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	func() {
		defer func() {
			if r := recover(); r != "encoder bug" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		WriteAtomic(filepath.Join(dir, "out.bin"), func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("encoder bug")
		})
	}()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestWriteAtomicThroughLinks: an output path that is a symbolic link (to
// a file, to another link, dangling, relative or absolute) is written
// through: the link stays a link, its final target gets the data, and no
// temporary file is left beside either; a loop of links is an error.
func TestWriteAtomicThroughLinks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(sub, "target.bin")
	os.WriteFile(target, []byte("old"), 0o600)
	for name, link := range map[string]string{
		"rel.bin":  "data/target.bin",
		"abs.bin":  target,
		"hop.bin":  "rel.bin",
		"dang.bin": "data/new.bin",
	} {
		if err := os.Symlink(link, filepath.Join(dir, name)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	for _, c := range []struct{ link, target string }{
		{"rel.bin", target}, {"abs.bin", target}, {"hop.bin", target}, {"dang.bin", filepath.Join(sub, "new.bin")},
	} {
		data := []byte("through " + c.link)
		if err := WriteAtomic(filepath.Join(dir, c.link), func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			t.Fatalf("%s: %v", c.link, err)
		}
		if fi, err := os.Lstat(filepath.Join(dir, c.link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link (%v)", c.link, err)
		}
		if got, err := os.ReadFile(c.target); err != nil || string(got) != string(data) {
			t.Errorf("%s: target holds %q, %v; want %q", c.link, got, err, data)
		}
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the target's permissions: %v %v, want 0600 kept", fi.Mode(), err)
	}
	for _, d := range []string{dir, sub} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name()[0] == '.' {
				t.Errorf("%s left in %s", e.Name(), d)
			}
		}
	}
	os.Symlink("loop2.bin", filepath.Join(dir, "loop1.bin"))
	os.Symlink("loop1.bin", filepath.Join(dir, "loop2.bin"))
	if err := WriteAtomic(filepath.Join(dir, "loop1.bin"), func(w io.Writer) error { return nil }); err == nil {
		t.Error("a loop of links: no error")
	}
}
