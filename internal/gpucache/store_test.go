package gpucache

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/gputest"
)

// testStore is a Store as a backend would declare one.
var testStore = &Store{Subdir: "test", Magic: "NDTSBIN\x01", Suffix: ".tsbin", Payload: "binary", Damaged: "test: damaged cache file"}

var testKey = keyOf("test")

func keyOf(source string) Key {
	b := NewKey("gpucache-test-1")
	b.Field("source", source)
	return b.Key()
}

// TestFileDamage: every kind of damage is recognised.
func TestFileDamage(t *testing.T) {
	s := testStore
	payload := []byte("\x7fELF not really a program binary, but bytes all the same")
	good := s.Encode(testKey, payload)
	if got, err := s.Decode(testKey, good); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("round trip: %v", err)
	}
	if s.HeaderSize() != 80 {
		t.Errorf("header of %d bytes, want 80", s.HeaderSize())
	}
	damaged := map[string][]byte{
		"empty":         {},
		"header only":   good[:s.HeaderSize()],
		"truncated":     good[:len(good)-1],
		"half header":   good[:s.HeaderSize()/2],
		"extended":      append(slices.Clone(good), 0),
		"empty payload": s.Encode(testKey, nil)[:s.HeaderSize()-1],
		"other key":     s.Encode(keyOf("other"), payload),
		"garbage":       bytes.Repeat([]byte{0xa5}, len(good)),
		"zero-filled":   make([]byte, len(good)),
		"huge length":   func() []byte { b := slices.Clone(good); b[len(s.Magic)+32+7] = 0xff; return b }(),
		"another store": append([]byte("NDCUBIN\x01"), good[8:]...),
	}
	for _, region := range []struct {
		name string
		at   int
	}{{"magic", 0}, {"key", 8}, {"length", 40}, {"sum", 48}, {"payload", s.HeaderSize()}, {"last byte", len(good) - 1}} {
		b := slices.Clone(good)
		b[region.at] ^= 0x01
		damaged["flipped "+region.name] = b
	}
	for name, data := range damaged {
		_, err := s.Decode(testKey, data)
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: decode = %v, want a *FileError", name, err)
		} else if !strings.HasPrefix(err.Error(), "test: damaged cache file: ") {
			t.Errorf("%s: message %q", name, err)
		}
	}
	// An empty payload is valid as a file (the driver refuses it later).
	if got, err := s.Decode(testKey, s.Encode(testKey, nil)); err != nil || len(got) != 0 {
		t.Errorf("empty payload: %v", err)
	}
	_, err := s.Decode(testKey, good[:len(good)-1])
	if want := "test: damaged cache file: header says 56 bytes of binary, file holds 55"; err == nil || err.Error() != want {
		t.Errorf("truncated file reads %q, want %q", err, want)
	}
}

func TestFilesOnDisk(t *testing.T) {
	s := testStore
	dir := filepath.Join(t.TempDir(), "test")
	if _, err := s.Read(dir, testKey); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	payload := []byte("program binary")
	if err := s.Write(dir, testKey, payload); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read(dir, testKey); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read back: %q, %v", got, err)
	}
	path := s.FileName(dir, testKey)
	if filepath.Base(path) != testKey.String()+".tsbin" {
		t.Errorf("file name %s", path)
	}
	// Truncated on disk: recognised.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	var fe *FileError
	if _, err := s.Read(dir, testKey); !errors.As(err, &fe) {
		t.Errorf("truncated file: %v", err)
	}
	// Rewriting replaces it.
	if err := s.Write(dir, testKey, payload); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(dir, testKey); err != nil {
		t.Errorf("after rewrite: %v", err)
	}
}

// TestConcurrentWriters: writers racing on one key (as several processes
// may) each install a whole file, and leave no temporary behind.
func TestConcurrentWriters(t *testing.T) {
	s := testStore
	dir := t.TempDir()
	payloads := make([][]byte, 8)
	for i := range payloads {
		payloads[i] = bytes.Repeat([]byte{byte('a' + i)}, 100_000+i)
	}
	for range 5 {
		gputest.Together(len(payloads), func(i int) {
			if err := s.Write(dir, testKey, payloads[i]); err != nil {
				t.Error(err)
			}
			if got, err := s.Read(dir, testKey); err != nil || !slices.ContainsFunc(payloads, func(p []byte) bool { return bytes.Equal(p, got) }) {
				t.Errorf("a reader saw a partial file: %v", err)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want the one cache file", names)
	}
}

func TestDirAndClear(t *testing.T) {
	s := testStore
	root := t.TempDir()
	t.Setenv(DirEnv, root)
	dir, err := s.Dir()
	if err != nil || dir != filepath.Join(root, "test") {
		t.Fatalf("Dir = %q, %v", dir, err)
	}
	if err := s.Clear(); err != nil { // no directory yet
		t.Errorf("Clear on nothing: %v", err)
	}
	if err := s.Write(dir, testKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".tmp-123.tsbin"), []byte("left by a crash"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("not ours"), 0o644)
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "README" {
		t.Errorf("after Clear: %v", entries)
	}

	// Getenv replaces the environment.
	other := *s
	other.Getenv = func(k string) string {
		if k == DirEnv {
			return "/elsewhere"
		}
		return ""
	}
	if dir, err := other.Dir(); err != nil || dir != "/elsewhere/test" {
		t.Errorf("Dir with Getenv = %q, %v", dir, err)
	}
	// Unset: UserDir (under test, the temporary directory's).
	t.Setenv(DirEnv, "")
	user, _ := UserDir()
	if dir, err := s.Dir(); err != nil || dir != filepath.Join(user, "test") {
		t.Errorf("default Dir = %q, %v; want %s/test", dir, err, user)
	}
}

// TestUserDirUnderTest: under go test the caches live in the temporary
// directory, never the user's.
func TestUserDirUnderTest(t *testing.T) {
	dir, err := UserDir()
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(os.TempDir(), dir); err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("UserDir under test = %s, not in %s", dir, os.TempDir())
	}
	if user, err := os.UserCacheDir(); err == nil && strings.HasPrefix(dir, user) {
		t.Fatalf("UserDir under test = %s, in the user's cache %s", dir, user)
	}
}
