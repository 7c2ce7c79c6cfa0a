package cuda

import (
	"os"
	"strconv"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
)

// module returns the CUmodule of source compiled for this device with
// defines (gpu.DefineOptions), compiling only when neither this process
// nor the disk cache has it; concurrent calls for one key compile once.
// name is the program's name in NVRTC's messages.
func (d *Device) module(source, name string, defines []string) (uintptr, error) {
	key, options, err := moduleKey(d.info, source, defines)
	if err != nil {
		return 0, err
	}
	return getModule(&d.modules, key, func() ([]byte, error) { return compile(source, name, options) }, d.loadModule)
}

// moduleKey is the cache key, and the NVRTC options, of source compiled
// with defines for the device info describes.
func moduleKey(info Info, source string, defines []string) (gpucache.Key, []string, error) {
	nvrtcVer, err := nvrtcVersion()
	if err != nil {
		return gpucache.Key{}, nil, err
	}
	arch := info.ComputeCapability.Arch()
	options := compileOptions(arch, defines)
	return moduleKeyOf(source, options, arch, nvrtcVer, driverVersion), options, nil
}

// compileOptions is the NVRTC command line for arch and defines.
func compileOptions(arch string, defines []string) []string {
	return append([]string{"--gpu-architecture=" + arch}, gpu.DefineOptions(defines)...)
}

// cacheFormat is hashed into every key: change it when the key's inputs or
// the file layout change.
const cacheFormat = "ndconv-cuda-module-1"

// moduleKeyOf names one compilation: a hash of all its CUBIN depends on.
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

// moduleStore is the disk cache, in $NDCONV_CACHE_DIR/cuda, else the user
// cache directory's ndconv/cuda.
var moduleStore = &gpucache.Store{
	Subdir:  "cuda",
	Magic:   "NDCUBIN\x01",
	Suffix:  ".cubin",
	Payload: "CUBIN",
	Damaged: "cuda: damaged module cache file",
	Getenv:  os.Getenv,
}

// moduleCache is one device's modules (CUmodule handles) by key.
type moduleCache = gpucache.Cache[uintptr]

// getModule returns the module for key from c, compiling and loading it at
// most once however many goroutines ask. A failed build is not remembered.
func getModule(c *moduleCache, key gpucache.Key, compile func() ([]byte, error), load func([]byte) (uintptr, error)) (uintptr, error) {
	return c.Get(moduleStore, key,
		func() (uintptr, []byte, error) {
			image, err := compile()
			if err != nil {
				return 0, nil, err
			}
			m, err := load(image)
			return m, image, err
		},
		load)
}
