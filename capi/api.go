package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// The exported C functions (capi.go) convert their C types and call these,
// which hold all of the API's logic in plain Go, so that the tests call
// them without cgo. Every one of them validates each argument before it
// touches memory through it, and recovers any panic into an error code.

// handle is a prepared plan: either a kernel plan, which writes into the
// caller's output, or a filter plan, whose output is copied there.
type handle struct {
	mu     sync.Mutex
	closed bool // freed: a call that found the handle before it went fails
	plan   *ndconv.Plan
	filter *ndconv.FilterPlan
	in     nd.DType
	shape  []int
	// The output's dtype and shape, read once (Plan.Shape copies).
	outType  nd.DType
	outShape []int
	dev      *ndconv.Device // the shared device of a plan for device arrays, else nil
}

// close releases the plan's device, once no call is using it.
func (h *handle) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.plan != nil {
		h.plan.Close()
	}
	if h.filter != nil {
		h.filter.Close()
	}
}

// plans are the live plans by handle.
var plans idTable[*handle]

// Error codes, as doc.go gives them.
const (
	codeOK      = 0
	codeInvalid = 1 // the request or an argument is invalid or unsupported
	codeFailed  = 2 // anything else: an unavailable device, an internal error
)

// errorCode classifies err for the caller: codeInvalid for a request that
// is invalid or unsupported, codeFailed for anything else.
func errorCode(err error) int32 {
	var ae *nd.ArgumentError
	var ue *nd.UnsupportedError
	var se *filters.SyntaxError
	var uf *filters.UnknownFilterError
	var pe *filters.ParameterError
	var re *filters.RankError
	var za *zarr.ArgumentError
	var zu *zarr.UnsupportedError
	if errors.As(err, &ae) || errors.As(err, &ue) || errors.As(err, &se) || errors.As(err, &uf) || errors.As(err, &pe) || errors.As(err, &re) ||
		errors.As(err, &za) || errors.As(err, &zu) {
		return codeInvalid
	}
	return codeFailed
}

// fail writes err's message, NUL-terminated and cut to the buffer, into
// the caller's buffer (where there is one) and returns its code.
func fail(err error, buf unsafe.Pointer, n int32) int32 {
	if buf != nil && n > 0 {
		dst := unsafe.Slice((*byte)(buf), int(n))
		k := copy(dst[:len(dst)-1], err.Error())
		dst[k] = 0
	}
	return errorCode(err)
}

// internalError is a recovered panic: a bug in ndconv, not the caller's.
type internalError struct {
	fn    string
	value any
	stack string // the frame that panicked, for the report
}

func (e *internalError) Error() string {
	msg := fmt.Sprintf("capi: internal error in %s: %v", e.fn, e.value)
	if e.stack != "" {
		msg += " at " + e.stack
	}
	return strings.ReplaceAll(msg+" (a bug in ndconv: please report it)", "\n", " ")
}

// panicSite is the file:line of the function that panicked, read from the
// stack of the recovering goroutine: the first frame after panic's that is
// not the runtime's own (a runtime error's helper).
func panicSite() string {
	lines := strings.Split(string(debug.Stack()), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic(") {
			continue
		}
		// Frames are pairs of lines: the function, then "\tfile:line +0x…".
		for j := i + 2; j+1 < len(lines); j += 2 {
			if !strings.HasPrefix(lines[j], "runtime.") {
				// The package folder and file: the builder's path says nothing.
				f := strings.Fields(lines[j+1] + " ")[0]
				return path.Join(path.Base(path.Dir(f)), path.Base(f))
			}
		}
	}
	return ""
}

// testHook, when set (by tests only), runs at the start of every entry
// point, inside its recovery: a way to make one panic.
var testHook func(fn string)

// guard is deferred by every entry point: it turns a panic into
// codeFailed and an "internal error" message. Panics remain bugs; this
// keeps one from taking the caller's process with it.
func guard(fn string, rc *int32, errbuf unsafe.Pointer, errlen int32) {
	if p := recover(); p != nil {
		*rc = fail(&internalError{fn: fn, value: p, stack: panicSite()}, errbuf, errlen)
	}
}

func enter(fn string) {
	if testHook != nil {
		testHook(fn)
	}
}

func argError(arg, format string, a ...any) error {
	return &nd.ArgumentError{Arg: arg, Msg: fmt.Sprintf(format, a...)}
}

// buffer checks a pointer and the byte count the caller gives with it.
func buffer(arg string, p unsafe.Pointer, n int64) error {
	switch {
	case n < 0:
		return argError(arg, "%d bytes is negative", n)
	case p == nil && n != 0:
		return argError(arg, "NULL with %d bytes", n)
	}
	return nil
}

// cString reads the NUL-terminated string at p, at most max bytes of it.
func cString(p unsafe.Pointer, max int) ([]byte, error) {
	for n := 0; n <= max; n++ {
		if *(*byte)(unsafe.Add(p, n)) == 0 {
			return unsafe.Slice((*byte)(p), n), nil
		}
	}
	return nil, fmt.Errorf("longer than %d bytes (or not NUL-terminated)", max)
}

// maxWeights bounds nweights: complex weights of the largest kernel
// ndconv allocates.
const maxWeights = 2 * nd.MaxElements

// planNew is ndconv_plan_new.
func planNew(spec, weights unsafe.Pointer, nweights int64, out *int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_plan_new", &rc, errbuf, errlen)
	enter("ndconv_plan_new")
	switch {
	case spec == nil:
		return fail(argError("request", "NULL"), errbuf, errlen)
	case out == nil:
		return fail(argError("handle", "the pointer to store it at is NULL"), errbuf, errlen)
	case nweights < 0:
		return fail(argError("weights", "a count of %d is negative", nweights), errbuf, errlen)
	case nweights > maxWeights:
		return fail(argError("weights", "%d is more than a kernel's %d", nweights, int64(maxWeights)), errbuf, errlen)
	case weights == nil && nweights != 0:
		return fail(argError("weights", "NULL with a count of %d", nweights), errbuf, errlen)
	}
	b, err := cString(spec, maxRequest)
	if err != nil {
		return fail(argError("request", "%v", err), errbuf, errlen)
	}
	r, err := decodeRequest(b)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	var w []float64
	if nweights > 0 {
		w = slices.Clone(unsafe.Slice((*float64)(weights), int(nweights)))
	}
	h, err := newHandle(r, w)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	if h.plan != nil {
		h.outType, h.outShape = h.plan.DType(), h.plan.Shape()
	} else {
		h.outType, h.outShape = h.filter.DType(), h.filter.Shape()
	}
	*out = plans.add(h)
	return codeOK
}

// info is what ndconv_plan_info reports.
type info struct {
	Shape  []int  `json:"shape"`
	DType  string `json:"dtype"`
	Method string `json:"method"`
	Device string `json:"device"`
}

// acquire returns the live plan id names, locked: the caller unlocks
// h.mu. A plan freed meanwhile (by another thread) is an error.
func acquire(id int64) (*handle, error) {
	h, ok := plans.get(id)
	if !ok {
		return nil, fmt.Errorf("capi: no plan %d (freed?)", id)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, fmt.Errorf("capi: plan %d was freed", id)
	}
	return h, nil
}

// planInfo is ndconv_plan_info.
func planInfo(id int64, buf unsafe.Pointer, n int32, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_plan_info", &rc, errbuf, errlen)
	enter("ndconv_plan_info")
	if buf == nil || n <= 0 {
		return fail(argError("info buffer", "NULL or %d bytes", n), errbuf, errlen)
	}
	h, err := acquire(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	defer h.mu.Unlock()
	var in info
	if h.plan != nil {
		in = info{h.plan.Shape(), h.plan.DType().String(), h.plan.Method().String(), h.plan.Device()}
	} else {
		in = info{h.filter.Shape(), h.filter.DType().String(), h.filter.Method(), h.filter.Device()}
	}
	b, err := json.Marshal(in)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	if len(b)+1 > int(n) {
		return fail(argError("info buffer", "%d bytes, the plan's info needs %d", n, len(b)+1), errbuf, errlen)
	}
	dst := unsafe.Slice((*byte)(buf), int(n))
	dst[copy(dst, b)] = 0
	return codeOK
}

// sized checks that nbytes is exactly the size of an array of dt and shape.
func sized(dt nd.DType, shape []int, nbytes int64) error {
	if !dt.Valid() {
		return &nd.UnsupportedError{What: "dtype", Value: dt.String()}
	}
	n, err := nd.NumElements(shape)
	if err != nil {
		return err
	}
	if int64(n)*int64(dt.Size()) != nbytes {
		return argError("array", "%v %v needs %d bytes, the buffer has %d", dt, shape, n*dt.Size(), nbytes)
	}
	return nil
}

// view makes an Array of dt and shape over the nbytes at p, which sized
// has checked and which are aligned for dt, without copying.
// The shape is the caller's, not a copy: the handle's, which no one
// changes. The typed slice is made directly rather than through
// nd.ViewBytes's reflection, which cost a small call about a microsecond.
func view(dt nd.DType, shape []int, p unsafe.Pointer, nbytes int64) nd.Array {
	var data any
	if nbytes == 0 {
		data = nd.ViewBytes(dt, nil)
	} else {
		n := int(nbytes) / dt.Size()
		switch dt {
		case nd.Uint8:
			data = unsafe.Slice((*uint8)(p), n)
		case nd.Int8:
			data = unsafe.Slice((*int8)(p), n)
		case nd.Uint16:
			data = unsafe.Slice((*uint16)(p), n)
		case nd.Int16:
			data = unsafe.Slice((*int16)(p), n)
		case nd.Uint32:
			data = unsafe.Slice((*uint32)(p), n)
		case nd.Int32:
			data = unsafe.Slice((*int32)(p), n)
		case nd.Uint64:
			data = unsafe.Slice((*uint64)(p), n)
		case nd.Int64:
			data = unsafe.Slice((*int64)(p), n)
		case nd.Float32:
			data = unsafe.Slice((*float32)(p), n)
		case nd.Float64:
			data = unsafe.Slice((*float64)(p), n)
		case nd.Complex64:
			data = unsafe.Slice((*complex64)(p), n)
		case nd.Complex128:
			data = unsafe.Slice((*complex128)(p), n)
		default:
			data = nd.ViewBytes(dt, unsafe.Slice((*byte)(p), nbytes))
		}
	}
	return nd.Array{Shape: shape, Data: data}
}

// aligned says whether p is aligned for dt's elements (for complex ones,
// their parts'): Go may not point a typed slice elsewhere.
func aligned(p unsafe.Pointer, dt nd.DType) bool {
	a := dt.Size()
	if dt.IsComplex() {
		a /= 2
	}
	return a <= 1 || uintptr(p)%uintptr(a) == 0
}

// overlap says whether the byte ranges [a, a+na) and [b, b+nb) share a byte.
func overlap(a unsafe.Pointer, na int64, b unsafe.Pointer, nb int64) bool {
	return overlapAddr(uintptr(a), na, uintptr(b), nb)
}

// overlapAddr is overlap for addresses (of device memory, say).
func overlapAddr(pa uintptr, na int64, pb uintptr, nb int64) bool {
	if na == 0 || nb == 0 {
		return false
	}
	return pa < pb+uintptr(nb) && pb < pa+uintptr(na)
}

// planExecute is ndconv_plan_execute.
func planExecute(id int64, src unsafe.Pointer, srcBytes int64, dst unsafe.Pointer, dstBytes int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_plan_execute", &rc, errbuf, errlen)
	enter("ndconv_plan_execute")
	if err := buffer("input", src, srcBytes); err != nil {
		return fail(err, errbuf, errlen)
	}
	if err := buffer("output", dst, dstBytes); err != nil {
		return fail(err, errbuf, errlen)
	}
	h, err := acquire(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	defer h.mu.Unlock()
	if err := sized(h.in, h.shape, srcBytes); err != nil {
		return fail(fmt.Errorf("input: %w", err), errbuf, errlen)
	}
	outType, outShape := h.outType, h.outShape
	if err := sized(outType, outShape, dstBytes); err != nil {
		return fail(fmt.Errorf("output: %w", err), errbuf, errlen)
	}
	in := view(h.in, h.shape, src, srcBytes)
	if !aligned(src, h.in) {
		// A misaligned input (numpy allows one) is copied once.
		if in, err = nd.New(h.in, h.shape...); err != nil {
			return fail(err, errbuf, errlen)
		}
		copy(in.Bytes(), unsafe.Slice((*byte)(src), srcBytes))
	}
	var dstBuf []byte
	if dstBytes > 0 {
		dstBuf = unsafe.Slice((*byte)(dst), dstBytes)
	}
	ctx := context.Background()
	if h.plan != nil {
		// An output that overlaps the input (in place, or a view of it)
		// would be read after it is written, and a misaligned one cannot
		// be typed: the result goes to a temporary and is copied, as
		// scipy.ndimage does for overlap.
		var out nd.Array
		direct := aligned(dst, outType) && !overlap(src, srcBytes, dst, dstBytes)
		if direct {
			out = view(outType, outShape, dst, dstBytes)
		} else if out, err = nd.New(outType, outShape...); err != nil {
			return fail(err, errbuf, errlen)
		}
		if _, err = h.plan.Execute(ctx, out, in); err == nil && !direct {
			copy(dstBuf, out.Bytes())
		}
	} else {
		// A filter plan returns its own array: the input is read whole
		// before the output is written, overlapping or not.
		var got nd.Array
		if got, err = h.filter.Execute(ctx, in); err == nil {
			copy(dstBuf, got.Bytes())
		}
	}
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	return codeOK
}

// planFree is ndconv_plan_free: an unknown handle (one freed before) is
// an error, as every other call's.
func planFree(id int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_plan_free", &rc, errbuf, errlen)
	enter("ndconv_plan_free")
	h, ok := plans.take(id)
	if !ok {
		return fail(fmt.Errorf("capi: no plan %d (freed already?)", id), errbuf, errlen)
	}
	h.close()
	return codeOK
}

// devices are the devices that plans for device arrays run on, one per
// name, opened on first use and kept for the process (a CUDA device's
// primary context, retained once: the one CuPy and PyTorch use).
var (
	devicesMu sync.Mutex
	devices   = map[string]*ndconv.Device{}
)

// sharedDevice returns the open device called name, which must be a CUDA
// device: the only kind whose memory a caller's arrays live in.
func sharedDevice(name string) (*ndconv.Device, error) {
	if name != "cuda" && !strings.HasPrefix(name, "cuda:") {
		return nil, &nd.UnsupportedError{What: "device for device arrays", Value: name, Supported: "cuda, cuda:N"}
	}
	devicesMu.Lock()
	defer devicesMu.Unlock()
	if d := devices[name]; d != nil {
		return d, nil
	}
	d, err := ndconv.OpenDevice(name)
	if err != nil {
		return nil, err
	}
	devices[name] = d
	return d, nil
}

// noStream is the stream argument that asks for no synchronisation (the
// producer's data is ready: __cuda_array_interface__'s "stream": None).
const noStream = -1

// planExecuteDevice is ndconv_plan_execute_device: src and dst are device
// addresses of the caller's memory (C-contiguous, the plan's input and
// output sizes), stream the caller's CUDA stream to wait for (0: the
// legacy default stream; noStream: none).
func planExecuteDevice(id int64, src uintptr, srcBytes int64, dst uintptr, dstBytes int64, stream int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_plan_execute_device", &rc, errbuf, errlen)
	enter("ndconv_plan_execute_device")
	switch {
	case srcBytes < 0 || dstBytes < 0:
		return fail(argError("device array", "a negative byte count (%d, %d)", srcBytes, dstBytes), errbuf, errlen)
	case src == 0 && srcBytes != 0:
		return fail(argError("input", "NULL device pointer with %d bytes", srcBytes), errbuf, errlen)
	case dst == 0 && dstBytes != 0:
		return fail(argError("output", "NULL device pointer with %d bytes", dstBytes), errbuf, errlen)
	case stream < noStream:
		return fail(argError("stream", "%d is neither a stream handle nor %d (none)", stream, noStream), errbuf, errlen)
	case overlapAddr(src, srcBytes, dst, dstBytes):
		return fail(argError("output", "shares device memory with the input: give an output that does not overlap it"), errbuf, errlen)
	}
	h, err := acquire(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	defer h.mu.Unlock()
	if h.dev == nil {
		return fail(argError("plan", "plan %d was made for host arrays (ask for device_arrays in the request)", id), errbuf, errlen)
	}
	if err := sized(h.in, h.shape, srcBytes); err != nil {
		return fail(fmt.Errorf("input: %w", err), errbuf, errlen)
	}
	outType, outShape := h.plan.DType(), h.plan.Shape()
	if err := sized(outType, outShape, dstBytes); err != nil {
		return fail(fmt.Errorf("output: %w", err), errbuf, errlen)
	}
	if !alignedAddr(src, h.in) || !alignedAddr(dst, outType) {
		return fail(argError("device array", "address not aligned for its dtype (input %#x %v, output %#x %v)", src, h.in, dst, outType), errbuf, errlen)
	}
	in, err := h.dev.Wrap(h.in, src, int(srcBytes), h.shape...)
	if err != nil {
		return fail(fmt.Errorf("input: %w", err), errbuf, errlen)
	}
	defer in.Free()
	out, err := h.dev.Wrap(outType, dst, int(dstBytes), outShape...)
	if err != nil {
		return fail(fmt.Errorf("output: %w", err), errbuf, errlen)
	}
	defer out.Free()
	ctx := context.Background()
	if stream != noStream {
		ctx = ndconv.WithStream(ctx, uintptr(stream))
	}
	if _, err := h.plan.ExecuteDevice(ctx, out, in); err != nil {
		return fail(err, errbuf, errlen)
	}
	return codeOK
}

// alignedAddr says whether the device address p is aligned for dt's
// elements (for complex ones, their parts'), as the kernels read them.
func alignedAddr(p uintptr, dt nd.DType) bool {
	a := dt.Size()
	if dt.IsComplex() {
		a /= 2
	}
	return a <= 1 || p%uintptr(a) == 0
}
