package cuda

import (
	"strconv"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
)

// Module returns the kernels of source compiled for this device with
// defines, compiling only when neither this process nor the disk cache
// has them. Each define is NAME or NAME=VALUE (passed as -DNAME=VALUE); an
// entry starting with "-" is passed to NVRTC as an option as it is. name
// is the program's name in NVRTC's messages.
//
// Modules are cached in memory per device (all callers share one *Module,
// which stays loaded until the device's last Close) and on disk under
// CacheDir, keyed by the SHA-256 of the source, the sorted defines and
// options, the architecture and the NVRTC and driver versions. Concurrent
// calls for one key compile once; the others wait for it. A damaged cache
// file is ignored, and replaced by a fresh compilation.
func (d *Device) Module(source, name string, defines []string) (*Module, error) {
	nvrtcVer, err := nvrtcVersion()
	if err != nil {
		return nil, err
	}
	arch := d.info.ComputeCapability.Arch()
	options := compileOptions(arch, defines)
	key := moduleKeyOf(source, options, arch, nvrtcVer, driver.version)
	return getModule(&d.modules, key,
		func() ([]byte, error) { return compile(source, name, options) },
		d.LoadModule)
}

// compileOptions is the NVRTC command line for arch and defines: the
// architecture, then the defines and options sorted, so that the same set
// in another order is the same compilation and the same cache key.
func compileOptions(arch string, defines []string) []string {
	return append([]string{"--gpu-architecture=" + arch}, gpu.DefineOptions(defines)...)
}

// cacheFormat is hashed into every key: change it when the key's inputs or
// the file layout change, and old files are simply never found again.
const cacheFormat = "ndconv-cuda-module-1"

// moduleKeyOf names one compilation: the SHA-256 of everything its CUBIN
// depends on, each input hashed with its length (gpucache.KeyBuilder).
func moduleKeyOf(source string, options []string, arch string, nvrtc Version, driverVersion int) gpucache.Key {
	b := gpucache.NewKey(cacheFormat)
	b.Field("arch", arch)
	b.Field("nvrtc", nvrtc.String())
	b.Field("driver", strconv.Itoa(driverVersion))
	for _, o := range options {
		b.Field("option", o)
	}
	b.Field("source", source)
	return b.Key()
}

// moduleStore is the disk cache: a file is a header (magic "NDCUBIN\x01",
// the key, the CUBIN's length and SHA-256) and the CUBIN, named
// <key>.cubin in CacheDir.
var moduleStore = &gpucache.Store{
	Subdir:  "cuda",
	Magic:   "NDCUBIN\x01",
	Suffix:  ".cubin",
	Payload: "CUBIN",
	Damaged: "cuda: damaged module cache file",
	Getenv:  func(k string) string { return lookupEnv(k) },
}

// moduleCache is one device's modules by key, with the counters tests and
// benchmarks read.
type moduleCache = gpucache.Cache[*Module]

// getModule returns the module for key from c, compiling it (compile
// returns the CUBIN) and loading it (load) at most once however many
// goroutines ask at the same time. Every module it returns is owned by the
// cache (cached: Unload leaves it loaded). A failed build is not
// remembered: the next call tries again.
func getModule(c *moduleCache, key gpucache.Key, compile func() ([]byte, error), load func([]byte) (*Module, error)) (*Module, error) {
	loadCached := func(image []byte) (*Module, error) {
		m, err := load(image)
		if err != nil {
			return nil, err
		}
		m.cached = true
		return m, nil
	}
	return c.Get(moduleStore, key,
		func() (*Module, []byte, error) {
			image, err := compile()
			if err != nil {
				return nil, nil, err
			}
			m, err := loadCached(image)
			return m, image, err
		},
		loadCached)
}

// CacheStats counts a device's module cache traffic since Open.
type CacheStats struct {
	MemoryHits int64 // Module calls answered by a module already loaded (or being built)
	DiskHits   int64 // answered by a CUBIN read from the disk cache
	Compiles   int64 // NVRTC compilations
	DiskWrites int64 // CUBINs written to the disk cache
	Rejected   int64 // cache files ignored: damaged, or refused by the driver
	DiskErrors int64 // the cache directory could not be used (compiling still worked)
}

// CacheStats returns the device's module cache counters.
func (d *Device) CacheStats() CacheStats { return snapshot(&d.modules) }

func snapshot(c *moduleCache) CacheStats {
	s := c.Stats()
	return CacheStats{s.MemoryHits, s.DiskHits, s.Builds, s.DiskWrites, s.Rejected, s.DiskErrors}
}

// CacheDir is where compiled modules are kept: $NDCONV_CACHE_DIR/cuda if
// that is set, else ndconv/cuda in the user's cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux).
func CacheDir() (string, error) { return moduleStore.Dir() }

// ClearCache deletes the compiled modules in CacheDir (and any temporary
// files left by an interrupted write). Modules already loaded stay loaded.
func ClearCache() error { return moduleStore.Clear() }
