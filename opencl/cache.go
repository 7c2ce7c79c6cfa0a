package opencl

import (
	"github.com/ndconv/ndconv/internal/gpucache"
)

// cacheFormat is hashed into every key: change it when the key's inputs or
// the file layout change, and old files are simply never found again.
// Format 2: binaries cached before the build options and kernel names
// were kept alive through their calls (api.go's ptr) may hold another
// program's build, so none of them is read again.
const cacheFormat = "ndconv-opencl-program-2"

// programKeyOf names one build: the SHA-256 of everything its binary
// depends on, each input hashed with its length (gpucache.KeyBuilder). The
// device is named by its platform, its own name and version and its
// driver's version: a driver update or another device of the same name on
// another platform is another key.
func programKeyOf(source, options string, info Info) gpucache.Key {
	b := gpucache.NewKey(cacheFormat)
	b.Field("platform", info.PlatformName)
	b.Field("platform-version", info.PlatformVersion)
	b.Field("device", info.Name)
	b.Field("device-version", info.Version)
	b.Field("driver", info.DriverVersion)
	b.Field("options", options)
	b.Field("source", source)
	return b.Key()
}

// programStore is the disk cache: a file is a header (magic
// "NDCLBIN\x01", the key, the binary's length and SHA-256) and the
// program binary, named <key>.clbin in CacheDir.
var programStore = &gpucache.Store{
	Subdir:  "opencl",
	Magic:   "NDCLBIN\x01",
	Suffix:  ".clbin",
	Payload: "binary",
	Damaged: "opencl: damaged program cache file",
	Getenv:  func(k string) string { return lookupEnv(k) },
}

// programCache is one device's programs by key, with the counters tests
// and benchmarks read.
type programCache = gpucache.Cache[*Program]

// CacheStats counts a device's program cache traffic since Open.
type CacheStats struct {
	MemoryHits int64 // Program calls answered by a program already built (or being built)
	DiskHits   int64 // answered by a binary from the disk cache
	Builds     int64 // builds from source
	DiskWrites int64 // binaries written to the disk cache
	Rejected   int64 // cache files ignored: damaged, or refused by the driver
	DiskErrors int64 // the cache directory could not be used (building still worked)
}

// CacheStats returns the device's program cache counters.
func (d *Device) CacheStats() CacheStats { return snapshot(&d.programs) }

// snapshot is c's counters as CacheStats, which has gpucache.Stats' fields.
func snapshot(c *programCache) CacheStats { return CacheStats(c.Stats()) }

// CacheDir is where program binaries are kept: $NDCONV_CACHE_DIR/opencl
// if that is set, else ndconv/opencl in the user's cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux).
func CacheDir() (string, error) { return programStore.Dir() }

// ClearCache deletes the program binaries in CacheDir (and any temporary
// files left by an interrupted write). Programs already built stay built.
func ClearCache() error { return programStore.Clear() }
