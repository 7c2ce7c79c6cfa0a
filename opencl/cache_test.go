package opencl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ndconv/ndconv/internal/gpucache"
)

var testInfo = Info{PlatformName: "Portable Computing Language", PlatformVersion: "OpenCL 3.0 PoCL 3.1", Name: "pthread-cpu", Version: "OpenCL 3.0 PoCL", DriverVersion: "3.1"}

var testKey = programKeyOf("test", "-DA=1", testInfo)

func TestBuildOptions(t *testing.T) {
	gpuInfo := Info{PlatformName: "NVIDIA CUDA", PlatformVersion: "OpenCL 3.0 CUDA 13.0.88", Name: "NVIDIA H200"}
	got, err := buildOptions([]string{"TILE=16", "-cl-std=CL1.2", "KW=5", "BORDER", "OUT_MIN=(-2147483647-1)"}, gpuInfo)
	want := "-DBORDER -DKW=5 -DOUT_MIN=(-2147483647-1) -DTILE=16 -cl-std=CL1.2"
	if err != nil || got != want {
		t.Errorf("buildOptions = %q, %v, want %q", got, err, want)
	}
	if got, err := buildOptions(nil, gpuInfo); got != "" || err != nil {
		t.Errorf("no defines: %q, %v", got, err)
	}
	// PoCL's builds are quiet: its compiler would print its warnings' count
	// on the process's stderr.
	if got, err := buildOptions([]string{"KW=5"}, testInfo); got != "-DKW=5 -w" || err != nil {
		t.Errorf("on PoCL: %q, %v, want %q", got, err, "-DKW=5 -w")
	}
	for _, bad := range []string{"A=1 2", "", "A=\"x\""} {
		if _, err := buildOptions([]string{bad}, gpuInfo); err == nil {
			t.Errorf("define %q accepted", bad)
		}
	}
}

// TestProgramKeyInputs: the defines' order does not matter; every input
// does.
func TestProgramKeyInputs(t *testing.T) {
	key := func(src string, defines []string, info Info) gpucache.Key {
		opts, err := buildOptions(defines, info)
		if err != nil {
			t.Fatal(err)
		}
		return programKeyOf(src, opts, info)
	}
	base := key("src", []string{"A=1", "B=2"}, testInfo)
	if key("src", []string{"B=2", "A=1"}, testInfo) != base {
		t.Error("the defines' order changes the key")
	}
	with := func(f func(*Info)) Info {
		i := testInfo
		f(&i)
		return i
	}
	variants := map[string]gpucache.Key{
		"source":           key("src ", []string{"A=1", "B=2"}, testInfo),
		"define":           key("src", []string{"A=1", "B=3"}, testInfo),
		"extra":            key("src", []string{"A=1", "B=2", "-cl-std=CL1.2"}, testInfo),
		"missing":          key("src", []string{"A=1"}, testInfo),
		"platform":         key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.PlatformName = "NVIDIA CUDA" })),
		"platform version": key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.PlatformVersion = "OpenCL 3.0 PoCL 5.0" })),
		"device":           key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.Name = "other" })),
		"device version":   key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.Version = "OpenCL 1.2" })),
		"driver":           key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.DriverVersion = "3.2" })),
	}
	for name, k := range variants {
		if k == base {
			t.Errorf("changing the %s leaves the key unchanged", name)
		}
	}
	// The indices and limits are not part of the key: the same device
	// found at another index shares its binaries.
	if key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.Platform, i.Device, i.ComputeUnits = 3, 1, 64 })) != base {
		t.Error("the device's index changes the key")
	}
}

// TestCacheDir: the disk cache is programStore (tested in internal/gpucache)
// in NDCONV_CACHE_DIR/opencl, its files <key>.clbin.
func TestCacheDir(t *testing.T) {
	root := t.TempDir()
	t.Setenv("NDCONV_CACHE_DIR", root)
	dir, err := programStore.Dir()
	if err != nil || dir != filepath.Join(root, "opencl") {
		t.Fatalf("CacheDir = %q, %v", dir, err)
	}
	if err := programStore.Write(dir, testKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, testKey.String()+".clbin")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the cache file is not <key>.clbin: %v", err)
	}
}
