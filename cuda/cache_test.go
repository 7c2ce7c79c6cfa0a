package cuda

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/internal/gpucache"
)

// TestModuleKeyMatchesOracle compares the key with testdata/cache_keys.json,
// written by cache_fixtures.py from the documented format.
func TestModuleKeyMatchesOracle(t *testing.T) {
	data, err := os.ReadFile("testdata/cache_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Source  string
		Options []string
		Arch    string
		NVRTC   string
		Driver  int
		Key     string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for i, c := range cases {
		major, minor, _ := strings.Cut(c.NVRTC, ".")
		var v Version
		v.Major, _ = strconv.Atoi(major)
		v.Minor, _ = strconv.Atoi(minor)
		if got := moduleKeyOf(c.Source, c.Options, c.Arch, v, c.Driver).String(); got != c.Key {
			t.Errorf("case %d: key %s, oracle %s", i, got, c.Key)
		}
	}
}

func TestCompileOptions(t *testing.T) {
	got := compileOptions("sm_90", []string{"TILE=16", "-lineinfo", "KW=5", "BORDER"})
	want := []string{"--gpu-architecture=sm_90", "-DBORDER", "-DKW=5", "-DTILE=16", "-lineinfo"}
	if !slices.Equal(got, want) {
		t.Errorf("compileOptions = %q, want %q", got, want)
	}
	if got := compileOptions("sm_80", nil); !slices.Equal(got, []string{"--gpu-architecture=sm_80"}) {
		t.Errorf("no defines: %q", got)
	}
}

// TestModuleKeyInputs: the defines' order does not matter; every input
// does.
func TestModuleKeyInputs(t *testing.T) {
	v := Version{13, 0}
	key := func(src string, defines []string, arch string, nv Version, drv int) gpucache.Key {
		return moduleKeyOf(src, compileOptions(arch, defines), arch, nv, drv)
	}
	base := key("src", []string{"A=1", "B=2"}, "sm_90", v, 13000)
	if key("src", []string{"B=2", "A=1"}, "sm_90", v, 13000) != base {
		t.Error("the defines' order changes the key")
	}
	variants := map[string]gpucache.Key{
		"source":  key("src ", []string{"A=1", "B=2"}, "sm_90", v, 13000),
		"define":  key("src", []string{"A=1", "B=3"}, "sm_90", v, 13000),
		"extra":   key("src", []string{"A=1", "B=2", "-lineinfo"}, "sm_90", v, 13000),
		"arch":    key("src", []string{"A=1", "B=2"}, "sm_89", v, 13000),
		"nvrtc":   key("src", []string{"A=1", "B=2"}, "sm_90", Version{13, 1}, 13000),
		"driver":  key("src", []string{"A=1", "B=2"}, "sm_90", v, 13010),
		"split":   key("src", []string{"A=1B=2"}, "sm_90", v, 13000),
		"missing": key("src", []string{"A=1"}, "sm_90", v, 13000),
	}
	for name, k := range variants {
		if k == base {
			t.Errorf("changing the %s leaves the key unchanged", name)
		}
	}
}

var testKey = moduleKeyOf("test", []string{"--gpu-architecture=sm_90"}, "sm_90", Version{13, 0}, 13000)

func TestCacheFileFormat(t *testing.T) {
	// The sample written by cache_fixtures.py decodes to its image.
	file, err := os.ReadFile("testdata/sample_cache_file.bin")
	if err != nil {
		t.Fatal(err)
	}
	image, err := os.ReadFile("testdata/sample_cache_image.bin")
	if err != nil {
		t.Fatal(err)
	}
	key := oracleKey(t, 0)
	got, err := moduleStore.Decode(key, file)
	if err != nil || !bytes.Equal(got, image) {
		t.Fatalf("decoding the oracle's file: %v (image equal: %v)", err, bytes.Equal(got, image))
	}
	if enc := moduleStore.Encode(key, image); !bytes.Equal(enc, file) {
		t.Error("Encode differs from the oracle's file")
	}
}

// oracleKey is key i of testdata/cache_keys.json.
func oracleKey(tb testing.TB, i int) gpucache.Key {
	tb.Helper()
	var cases []struct{ Key string }
	data, err := os.ReadFile("testdata/cache_keys.json")
	if err == nil {
		err = json.Unmarshal(data, &cases)
	}
	if err != nil || len(cases) <= i {
		tb.Fatalf("testdata/cache_keys.json: %v", err)
	}
	var k gpucache.Key
	if b, err := hex.DecodeString(cases[i].Key); err != nil || len(b) != len(k) {
		tb.Fatalf("bad key %q", cases[i].Key)
	} else {
		copy(k[:], b)
	}
	return k
}

// TestCacheDir: the disk cache is moduleStore (tested in internal/gpucache)
// in NDCONV_CACHE_DIR/cuda, its files <key>.cubin, and Clear empties it.
func TestCacheDir(t *testing.T) {
	root := t.TempDir()
	t.Setenv("NDCONV_CACHE_DIR", root)
	dir, err := moduleStore.Dir()
	if err != nil || dir != filepath.Join(root, "cuda") {
		t.Fatalf("the cache directory is %q, %v", dir, err)
	}
	if err := moduleStore.Write(dir, testKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, testKey.String()+".cubin")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the cache file is not <key>.cubin: %v", err)
	}
	if err := moduleStore.Clear(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Clear left the file: %v", err)
	}
}

// fakeBuilder stands in for NVRTC and the driver: it counts compilations,
// and its loader refuses images that are not ones it compiled, as the
// driver refuses a damaged CUBIN.
type fakeBuilder struct{ compiles atomic.Int64 }

func (f *fakeBuilder) compile() ([]byte, error) {
	f.compiles.Add(1)
	return []byte("CUBIN:good"), nil
}

func (f *fakeBuilder) load(image []byte) (uintptr, error) {
	if !bytes.HasPrefix(image, []byte("CUBIN:")) {
		return 0, &Error{Backend: "cuda", Call: "cuModuleLoadData", Code: codeInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE"}
	}
	return uintptr(f.compiles.Load()), nil
}

// TestModuleCache: getModule compiles and then loads (cold), and loads a
// CUBIN from the disk (a new process). The cache itself is tested in
// internal/gpucache.
func TestModuleCache(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	dir, _ := moduleStore.Dir()
	fb := &fakeBuilder{}
	c := &moduleCache{}
	m1, err := getModule(c, testKey, fb.compile, fb.load)
	if err != nil || m1 == 0 {
		t.Fatalf("cold: %v, %v", m1, err)
	}
	if m2, _ := getModule(c, testKey, fb.compile, fb.load); m2 != m1 {
		t.Error("warm: another module")
	}
	if got, want := c.Stats(), (gpucache.Stats{MemoryHits: 1, Builds: 1, DiskWrites: 1}); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	if got, err := moduleStore.Read(dir, testKey); err != nil || string(got) != "CUBIN:good" {
		t.Errorf("cache file holds %q, %v", got, err)
	}

	c = &moduleCache{} // a new process: only the disk remembers
	if m, err := getModule(c, testKey, fb.compile, fb.load); err != nil || m == 0 {
		t.Fatalf("disk: %v, %v", m, err)
	}
	if got, want := c.Stats(), (gpucache.Stats{DiskHits: 1}); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}

	// A CUBIN the driver refuses right after compiling is an error, and
	// nothing is written.
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	c = &moduleCache{}
	bad := func() ([]byte, error) { return []byte("garbage"), nil }
	var e *Error
	if _, err := getModule(c, testKey, bad, fb.load); !errors.As(err, &e) || e.Code != codeInvalidImage {
		t.Errorf("a refused compilation: %v", err)
	}
	if got, want := c.Stats(), (gpucache.Stats{Builds: 1}); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	if fb.compiles.Load() != 1 {
		t.Errorf("%d compilations in all, want 1", fb.compiles.Load())
	}
}
