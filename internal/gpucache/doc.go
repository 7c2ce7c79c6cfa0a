// Package gpucache owns the compiled-artifact cache both GPU backends put
// in front of their compilers: CUDA's CUBINs (NVRTC) and OpenCL's program
// binaries.
//
// It holds the three layers every backend shares, parameterised by what
// differs between them:
//
//   - Key: the SHA-256 of tagged, length-prefixed fields (KeyBuilder). The
//     backend chooses the fields (its format string, the source, the
//     options, the device and driver versions).
//   - Store: one backend's directory of cache files — where it is
//     (NDCONV_CACHE_DIR/<Subdir>, or ndconv/<Subdir> in the user's cache
//     directory), the file format (magic, key, length and SHA-256 checksum
//     before the payload, so that any damage is recognised before a driver
//     sees the bytes), atomic writes (temporary file and rename) and Clear.
//     The backend gives the magic, the file suffix and the wording of its
//     messages.
//   - Cache: one device's artifacts in memory, built at most once per key
//     however many goroutines ask (the others wait), from the Store where
//     it holds a good file, else by the backend's build function, whose
//     payload is then written to the Store; with the counters (Stats) tests
//     and benchmarks read.
//
// What an artifact is (a loaded CUDA module, an OpenCL program) and how it
// is built or loaded stay in the backend.
package gpucache
