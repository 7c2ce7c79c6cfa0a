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

// programStore is the disk cache, in $NDCONV_CACHE_DIR/opencl, else
// ndconv/opencl in the user's cache directory: a file is a header (magic
// "NDCLBIN\x01", the key, the binary's length and SHA-256) and the
// program binary, named <key>.clbin.
var programStore = &gpucache.Store{
	Subdir:  "opencl",
	Magic:   "NDCLBIN\x01",
	Suffix:  ".clbin",
	Payload: "binary",
	Damaged: "opencl: damaged program cache file",
	Getenv:  func(k string) string { return lookupEnv(k) },
}

// programCache is one device's programs by key.
type programCache = gpucache.Cache[*Program]
