package cuda

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

// cufft holds cuFFT's entry points. cuFFT is a runtime-API library: it
// works in the context current on the calling thread (do's) and on our
// streams, which are the runtime's cudaStream_t.
var cufft struct {
	cufftGetVersion        entry // cufftResult cufftGetVersion(int *version)
	cufftCreate            entry // cufftResult cufftCreate(cufftHandle *plan)
	cufftSetAutoAllocation entry // cufftResult cufftSetAutoAllocation(cufftHandle plan, int autoAllocate)
	// cufftResult cufftMakePlanMany(cufftHandle plan, int rank, int *n,
	//     int *inembed, int istride, int idist, int *onembed, int ostride,
	//     int odist, cufftType type, int batch, size_t *workSize)
	cufftMakePlanMany entry
	cufftSetWorkArea  entry // cufftResult cufftSetWorkArea(cufftHandle plan, void *workArea)
	cufftSetStream    entry // cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream)
	cufftExecR2C      entry // cufftResult cufftExecR2C(cufftHandle plan, cufftReal *idata, cufftComplex *odata)
	cufftExecC2R      entry // cufftResult cufftExecC2R(cufftHandle plan, cufftComplex *idata, cufftReal *odata)
	cufftExecC2C      entry // cufftResult cufftExecC2C(cufftHandle plan, cufftComplex *idata, cufftComplex *odata, int direction)
	cufftDestroy      entry // cufftResult cufftDestroy(cufftHandle plan)
}

// cufftLib prefers CUDA 13's cuFFT (soname 12), then CUDA 12's; it is
// loaded only for FFT convolution.
var cufftLib = gpu.Library{
	Backend:   "cuda",
	Spec:      cudaSpec("NDCONV_LIBCUFFT", "libcufft.so.12", "libcufft.so.11", "libcufft.so"),
	Entries:   &cufft,
	NoLibrary: "no cuFFT library",
	NoSymbol:  "cuFFT library lacks an entry point",
	Result:    resultOf(func(code int) (string, string) { return codeName(cufftResultNames, "CUFFT_ERROR_", code), "" }),
	Unbound:   codeNotInitialized,
	Init: func(string) error {
		_, err := out[int32](&cufft.cufftGetVersion)
		return initFailed("cufftGetVersion", err)
	},
}

// CUFFTAvailable reports whether cuFFT can be loaded, and why not.
func CUFFTAvailable() error {
	if err := driverLib.Load(); err != nil {
		return err
	}
	return cufftLib.Load()
}

// FFTAvailable is CUFFTAvailable (gpu.FFTLibrary).
func (d *Device) FFTAvailable() error { return CUFFTAvailable() }

// cufftType values and the directions of cufftExecC2C (cufft.h).
const (
	cufftR2C = 0x2a
	cufftC2R = 0x2c
	cufftC2C = 0x29

	cufftForward = -1
	cufftInverse = 1
)

// fftPlan is a cuFFT plan (gpu.FFTPlan) of unnormalised batch transforms
// of contiguous C-order blocks on one stream, its work area pooled.
type fftPlan struct {
	dev     *Device
	handle  int32 // valid where created
	created bool
	work    *Buffer
	kind    gpu.FFTKind
}

// FFTPlan makes a plan on d for queue q (gpu.FFTLibrary).
func (d *Device) FFTPlan(lengths []int, batch int, kind gpu.FFTKind, q gpu.Queue) (gpu.FFTPlan, error) {
	if err := CUFFTAvailable(); err != nil {
		return nil, err
	}
	if len(lengths) < 1 || len(lengths) > gpu.MaxFFTRank {
		return nil, &UnsupportedError{Backend: "cuda", What: "FFT rank", Value: strconv.Itoa(len(lengths)), Reason: fmt.Sprintf("cuFFT transforms 1 to %d axes together", gpu.MaxFFTRank)}
	}
	n := make([]int32, len(lengths))
	for i, l := range lengths {
		n[i] = int32(l)
	}
	typ := uintptr(cufftC2C)
	switch kind {
	case gpu.RealForward:
		typ = cufftR2C
	case gpu.RealInverse:
		typ = cufftC2R
	}
	p := &fftPlan{dev: d, kind: kind}
	var workSize uint64
	err := d.do(func() error {
		if err := cufft.cufftCreate.Call(uintptr(unsafe.Pointer(&p.handle))); err != nil {
			return err
		}
		p.created = true
		// Our pool supplies the work area: cuFFT allocates none itself.
		if err := cufft.cufftSetAutoAllocation.Call(uintptr(p.handle), 0); err != nil {
			return err
		}
		// NULL embeddings: the default, contiguous layout.
		return cufft.cufftMakePlanMany.Call(uintptr(p.handle), uintptr(len(n)), uintptr(unsafe.Pointer(&n[0])),
			0, 1, 0, 0, 1, 0, typ, uintptr(batch), uintptr(unsafe.Pointer(&workSize)))
	})
	if err == nil {
		p.work, err = d.alloc("Scratch", max(int(workSize), 1), true)
	}
	if err == nil {
		err = d.do(func() error {
			if err := cufft.cufftSetWorkArea.Call(uintptr(p.handle), uintptr(p.work.ptr)); err != nil {
				return err
			}
			return cufft.cufftSetStream.Call(uintptr(p.handle), q.(*Stream).h)
		})
	}
	if err != nil {
		p.Destroy()
		return nil, err
	}
	return p, nil
}

func (p *fftPlan) Exec(in, out gpu.Buffer) error {
	src, dst := uintptr(in.(*Buffer).ptr), uintptr(out.(*Buffer).ptr)
	return p.dev.do(func() error {
		switch p.kind {
		case gpu.RealForward:
			return cufft.cufftExecR2C.Call(uintptr(p.handle), src, dst)
		case gpu.RealInverse:
			return cufft.cufftExecC2R.Call(uintptr(p.handle), src, dst)
		}
		direction := cufftForward
		if p.kind == gpu.ComplexInverse {
			direction = cufftInverse
		}
		return cufft.cufftExecC2C.Call(uintptr(p.handle), src, dst, uintptr(int64(direction)))
	})
}

// Destroy releases the plan and its work area; the stream must be idle.
func (p *fftPlan) Destroy() error {
	var err error
	if p.created {
		err = p.dev.do(func() error { return cufft.cufftDestroy.Call(uintptr(p.handle)) })
		p.created = false
	}
	if p.work != nil {
		p.work.Free()
		p.work = nil
	}
	return err
}
