package cuda

import (
	"fmt"
	"strconv"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// cuFFT's entry points, bound once by loadCUFFT. cuFFT is a runtime-API
// library: it works in the context current on the calling thread (our
// device's primary context, made current by Device.do) and on our
// streams, which are the runtime's cudaStream_t.
var cufft struct {
	cufftGetVersion        uintptr // cufftResult cufftGetVersion(int *version)
	cufftCreate            uintptr // cufftResult cufftCreate(cufftHandle *plan)
	cufftSetAutoAllocation uintptr // cufftResult cufftSetAutoAllocation(cufftHandle plan, int autoAllocate)
	// cufftResult cufftMakePlanMany(cufftHandle plan, int rank, int *n,
	//     int *inembed, int istride, int idist, int *onembed, int ostride,
	//     int odist, cufftType type, int batch, size_t *workSize)
	cufftMakePlanMany uintptr
	cufftSetWorkArea  uintptr // cufftResult cufftSetWorkArea(cufftHandle plan, void *workArea)
	cufftSetStream    uintptr // cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream)
	cufftExecR2C      uintptr // cufftResult cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata)
	cufftExecC2R      uintptr // cufftResult cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata)
	cufftDestroy      uintptr // cufftResult cufftDestroy(cufftHandle plan)
	// cufftResult cufftExecC2C(cufftHandle plan, cufftComplex *idata,
	//     cufftComplex *odata, int direction)
	cufftExecC2C uintptr
}

func cufftSymbols() []dynlib.Symbol {
	return []dynlib.Symbol{
		{"cufftGetVersion", &cufft.cufftGetVersion},
		{"cufftCreate", &cufft.cufftCreate},
		{"cufftSetAutoAllocation", &cufft.cufftSetAutoAllocation},
		{"cufftMakePlanMany", &cufft.cufftMakePlanMany},
		{"cufftSetWorkArea", &cufft.cufftSetWorkArea},
		{"cufftSetStream", &cufft.cufftSetStream},
		{"cufftExecR2C", &cufft.cufftExecR2C},
		{"cufftExecC2R", &cufft.cufftExecC2R},
		{"cufftExecC2C", &cufft.cufftExecC2C},
		{"cufftDestroy", &cufft.cufftDestroy},
	}
}

// cufftLibrary prefers CUDA 13's cuFFT (soname 12), then CUDA 12's
// (soname 11).
var cufftLibrary = dynlib.Spec{
	EnvVar:  "NDCONV_LIBCUFFT",
	Sonames: []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so"},
	Dirs:    cudaLibraryDirs,
	Globs:   cudaLibraryGlobs,
}

var cufftState struct {
	once    sync.Once
	err     error // an *UnavailableError
	path    string
	version int
}

// loadCUFFT opens and binds cuFFT, once. Its error says why FFT
// convolution is unavailable on CUDA.
func loadCUFFT() error {
	cufftState.once.Do(func() {
		if err := loadDriver(); err != nil {
			cufftState.err = err
			return
		}
		lib, err := gpu.OpenLibrary("cuda", cufftLibrary, lookupEnv, cufftSymbols(), func() { cufft.cufftCreate, cufft.cufftMakePlanMany = 0, 0 },
			"no cuFFT library", "cuFFT library lacks an entry point")
		if err != nil {
			cufftState.err = err
			return
		}
		var v int32
		if err := cufftCheck("cufftGetVersion", ccall(cufft.cufftGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
			cufftState.err = &UnavailableError{Backend: "cuda", Reason: "cufftGetVersion failed", Err: err}
			return
		}
		cufftState.path, cufftState.version = lib.Path, int(v)
	})
	return cufftState.err
}

// CUFFTAvailable reports whether cuFFT can be loaded, and why not.
func CUFFTAvailable() error { return loadCUFFT() }

// cufftResultNames are cufftResult's names by code.
var cufftResultNames = []string{
	"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
	"CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED",
	"CUFFT_INVALID_SIZE", "CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST",
	"CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR", "CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED",
	"CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED",
}

// cufftCheck turns a cufftResult into nil or an *Error for call.
func cufftCheck(call string, r uintptr) error {
	code := int(uint32(r))
	if code == 0 {
		return nil
	}
	name := "CUFFT_ERROR_" + strconv.Itoa(code)
	if code < len(cufftResultNames) {
		name = cufftResultNames[code]
	}
	return &Error{Call: call, Code: code, Name: name}
}

// cufftType values and the directions of cufftExecC2C (cufft.h).
const (
	cufftR2C = 0x2a
	cufftC2R = 0x2c
	cufftC2C = 0x29

	cufftForward = -1
	cufftInverse = 1
)

// cufftType is the plan type of a kind.
func cufftType(k gpu.FFTKind) uintptr {
	switch k {
	case gpu.RealForward:
		return cufftR2C
	case gpu.RealInverse:
		return cufftC2R
	}
	return cufftC2C
}

// fftPlan is a cuFFT plan of batch transforms of the given lengths (C
// order, contiguous), unnormalised, running on one stream with a work
// area from the device's pool: real ones (blocks of Π lengths real
// values, spectra of Π lengths / last · (last/2 + 1) complex values),
// forward (real-to-complex) or inverse (complex-to-real), or complex ones
// (Π lengths complex values each way).
type fftPlan struct {
	dev     *Device
	handle  int32 // valid where created
	created bool
	work    *Buffer
	kind    gpu.FFTKind
}

// newFFTPlan makes a plan on d for stream s.
func (d *Device) newFFTPlan(lengths []int, batch int, kind gpu.FFTKind, s *Stream) (*fftPlan, error) {
	if err := loadCUFFT(); err != nil {
		return nil, err
	}
	if len(lengths) < 1 || len(lengths) > gpu.MaxFFTRank {
		return nil, &UnsupportedError{Backend: "cuda", What: "FFT rank", Value: strconv.Itoa(len(lengths)), Reason: fmt.Sprintf("cuFFT transforms 1 to %d axes together", gpu.MaxFFTRank)}
	}
	n := make([]int32, len(lengths))
	for i, l := range lengths {
		n[i] = int32(l)
	}
	p := &fftPlan{dev: d, kind: kind}
	var workSize uint64
	err := d.do(func() error {
		if err := cufftCheck("cufftCreate", ccall(cufft.cufftCreate, uintptr(unsafe.Pointer(&p.handle)))); err != nil {
			return err
		}
		p.created = true
		// Our pool supplies the work area: cuFFT allocates none itself.
		if err := cufftCheck("cufftSetAutoAllocation", ccall(cufft.cufftSetAutoAllocation, uintptr(p.handle), 0)); err != nil {
			return err
		}
		// NULL embeddings: the default, contiguous layout.
		return cufftCheck("cufftMakePlanMany", ccall(cufft.cufftMakePlanMany, uintptr(p.handle), uintptr(len(n)), uintptr(unsafe.Pointer(&n[0])),
			0, 1, 0, 0, 1, 0, cufftType(kind), uintptr(batch), uintptr(unsafe.Pointer(&workSize))))
	})
	if err != nil {
		p.destroy()
		return nil, err
	}
	if p.work, err = d.Pool().Get(max(int(workSize), 1)); err != nil {
		p.destroy()
		return nil, err
	}
	err = d.do(func() error {
		if err := cufftCheck("cufftSetWorkArea", ccall(cufft.cufftSetWorkArea, uintptr(p.handle), uintptr(p.work.Ptr()))); err != nil {
			return err
		}
		return cufftCheck("cufftSetStream", ccall(cufft.cufftSetStream, uintptr(p.handle), s.handle()))
	})
	if err != nil {
		p.destroy()
		return nil, err
	}
	return p, nil
}

// exec queues the transform from in to out on the plan's stream.
func (p *fftPlan) exec(in, out DevicePtr) error {
	return p.dev.do(func() error {
		switch p.kind {
		case gpu.RealForward:
			return cufftCheck("cufftExecR2C", ccall(cufft.cufftExecR2C, uintptr(p.handle), uintptr(in), uintptr(out)))
		case gpu.RealInverse:
			return cufftCheck("cufftExecC2R", ccall(cufft.cufftExecC2R, uintptr(p.handle), uintptr(in), uintptr(out)))
		}
		direction := cufftForward
		if p.kind == gpu.ComplexInverse {
			direction = cufftInverse
		}
		return cufftCheck("cufftExecC2C", ccall(cufft.cufftExecC2C, uintptr(p.handle), uintptr(in), uintptr(out), uintptr(int64(direction))))
	})
}

// destroy releases the plan and its work area; the stream must be done
// with them.
func (p *fftPlan) destroy() error {
	var err error
	if p.created {
		err = p.dev.do(func() error { return cufftCheck("cufftDestroy", ccall(cufft.cufftDestroy, uintptr(p.handle))) })
		p.created = false
	}
	if p.work != nil {
		p.work.Free()
		p.work = nil
	}
	return err
}
