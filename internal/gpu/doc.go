// Package gpu owns the small pieces that both GPU backends (cuda, opencl)
// share beyond the compiled-artifact cache (internal/gpucache) and library
// loading (internal/dynlib):
//
//   - Registry: the process's one open device per key, counted Opens and
//     Closes, the last Close releasing it;
//   - TapsBytes: a kernels.Launch's weights converted to the kernel's
//     accumulation type (ACC_T), as the bytes of its taps argument (the
//     byte view itself is nd.AsBytes), and LaunchArgs, the arguments every
//     kernel family takes, in order;
//   - Life: a device's guard against its last Close while operations run;
//   - BuildAll and DefineOptions: building every launch's program (an
//     engine's Compile), defines as sorted compiler options;
//   - OpenLibrary: opening and binding a backend's C library, its failures
//     an UnavailableError;
//   - the failure classes both backends report, one type each with the
//     backend in a field (UnavailableError, LibraryError, UnsupportedError,
//     RangeError), which cuda and opencl export under the same names.
//
// Everything a backend owns — its handles, its API's error codes and the
// errors that carry them, queues and streams — stays in the backend.
package gpu
