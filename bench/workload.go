package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// A Workload is one timed operation, in the JSON form bench/README.md
// defines: peers read these lines and run the same work.
type Workload struct {
	Kind      string  `json:"kind"` // "workload"
	Set       string  `json:"set"`
	ID        string  `json:"id"`
	Shape     []int   `json:"shape"` // the whole input, channels last when Channels > 1
	DType     string  `json:"dtype"`
	OutDType  string  `json:"out_dtype"`
	Kernel    []int   `json:"kernel"` // extents over the leading axes
	Separable bool    `json:"separable"`
	Bank      int     `json:"bank"`
	Channels  int     `json:"channels"`
	Mode      string  `json:"mode"`
	Border    string  `json:"border"`
	CVal      float64 `json:"cval"`
	Rounds    int     `json:"rounds"`
	Transfers bool    `json:"transfers"`
	Bytes     int64   `json:"bytes"`
	Madds     int64   `json:"madds"`
}

// Sets names the workload sets.
var Sets = []string{"seeds", "anchors", "banks"}

// Lookup returns the workloads of a set: "seeds", "anchors", "banks", or
// "all".
func Lookup(set string) ([]Workload, error) {
	switch set {
	case "seeds":
		return Seeds(), nil
	case "anchors":
		return Anchors(), nil
	case "banks":
		return Banks(), nil
	case "all":
		return slices.Concat(Seeds(), Anchors(), Banks()), nil
	}
	return nil, &nd.UnsupportedError{What: "workload set", Value: set, Supported: "seeds, anchors, banks, all"}
}

// Complete fills the defaults and the derived fields (bytes, madds) of w.
func Complete(w Workload) Workload { return workload(w) }

// Check reports what makes w impossible to run: unknown names, a kernel
// of more axes than the input, a valid mode on an axis shorter than the
// kernel.
func Check(w Workload) error {
	w = workload(w)
	if _, err := Spec(w); err != nil {
		return err
	}
	if w.Bank < 1 || w.Channels < 1 {
		return fmt.Errorf("workload %s: bank and channels must be at least 1", w.ID)
	}
	spatial := len(w.Shape)
	if w.Channels > 1 {
		spatial--
	}
	if len(w.Kernel) > spatial {
		return fmt.Errorf("workload %s: a %d-D kernel on %d spatial axes", w.ID, len(w.Kernel), spatial)
	}
	if w.DType != "uint8" && w.DType != "float32" {
		return &nd.UnsupportedError{What: "workload dtype", Value: w.DType, Supported: "uint8, float32"}
	}
	for d, k := range w.Kernel {
		if w.Mode == "valid" && w.Shape[d] < k {
			return fmt.Errorf("workload %s: valid mode with axis %d of %d shorter than the kernel's %d", w.ID, d, w.Shape[d], k)
		}
	}
	return nil
}

// workload fills the derived fields of w.
func workload(w Workload) Workload {
	w.Kind = "workload"
	if w.Bank == 0 {
		w.Bank = 1
	}
	if w.Channels == 0 {
		w.Channels = 1
	}
	if w.Rounds == 0 {
		w.Rounds = 1
	}
	if w.OutDType == "" {
		w.OutDType = w.DType
	}
	if w.Mode == "" {
		w.Mode = "same"
	}
	if w.Border == "" {
		w.Border = "constant"
	}
	w.Bytes, w.Madds = cost(w)
	return w
}

func square(k, rank int) []int {
	s := make([]int, rank)
	for i := range s {
		s[i] = k
	}
	return s
}

// Seeds are the workloads of the five write-ups (../shared/SEEDS.md):
// S000 the 256³ volume with banks of 7³ kernels, S001 the time-vs-width
// curve, S002 the separable blur with transfers every round, S003 the
// 640×480 image in 1 and 4 channels.
func Seeds() []Workload {
	var ws []Workload
	for _, bank := range []int{1, 2, 4, 8, 16, 32} {
		ws = append(ws, workload(Workload{Set: "seeds", ID: fmt.Sprintf("S000-bank%d", bank),
			Shape: []int{256, 256, 256}, DType: "uint8", OutDType: "float32", Kernel: []int{7, 7, 7},
			Bank: bank, Mode: "valid"}))
	}
	for k := 2; k <= 32; k++ {
		ws = append(ws, workload(Workload{Set: "seeds", ID: fmt.Sprintf("S001-w%d", k),
			Shape: []int{2048, 2048}, DType: "float32", Kernel: []int{k, k}}))
	}
	ws = append(ws, workload(Workload{Set: "seeds", ID: "S002", Shape: []int{1500, 1500}, DType: "float32",
		Kernel: []int{21, 21}, Separable: true, Rounds: 100, Transfers: true}))
	for _, sep := range []bool{false, true} {
		for _, channels := range []int{1, 4} {
			for _, dt := range []string{"uint8", "float32"} {
				shape := []int{480, 640}
				if channels > 1 {
					shape = append(shape, channels)
				}
				name := "full"
				if sep {
					name = "sep"
				}
				ws = append(ws, workload(Workload{Set: "seeds", ID: fmt.Sprintf("S003-%s-c%d-%s", name, channels, dt),
					Shape: shape, DType: dt, Kernel: []int{31, 31}, Separable: sep, Channels: channels}))
			}
		}
	}
	return ws
}

// Anchors are the workloads the issue tracker names to anchor ndconv
// against the roofline and the peers: 2-D, colour, 3-D and 1-D.
func Anchors() []Workload {
	var ws []Workload
	add := func(w Workload) { w.Set = "anchors"; ws = append(ws, workload(w)) }
	for _, k := range []int{3, 5, 7, 9, 15, 31} {
		add(Workload{ID: fmt.Sprintf("A-2d-k%d", k), Shape: []int{8192, 8192}, DType: "float32", Kernel: square(k, 2)})
	}
	for _, k := range []int{3, 7, 15, 31} {
		add(Workload{ID: fmt.Sprintf("A-2d-sep-k%d", k), Shape: []int{8192, 8192}, DType: "float32", Kernel: square(k, 2), Separable: true})
	}
	for _, k := range []int{3, 7, 15} {
		add(Workload{ID: fmt.Sprintf("A-2d-u8-k%d", k), Shape: []int{8192, 8192}, DType: "uint8", Kernel: square(k, 2)})
	}
	add(Workload{ID: "A-rgba-k5", Shape: []int{4096, 4096, 4}, DType: "float32", Kernel: square(5, 2), Channels: 4})
	for _, k := range []int{3, 7} {
		add(Workload{ID: fmt.Sprintf("A-3d-k%d", k), Shape: []int{512, 512, 512}, DType: "float32", Kernel: square(k, 3)})
	}
	add(Workload{ID: "A-3d-sep-k7", Shape: []int{512, 512, 512}, DType: "float32", Kernel: square(7, 3), Separable: true})
	for _, k := range []int{7, 63, 1023} {
		add(Workload{ID: fmt.Sprintf("A-1d-k%d", k), Shape: []int{1 << 28}, DType: "float32", Kernel: []int{k}})
	}
	return ws
}

// Banks are filter banks — one input, many kernels, an output per kernel —
// as cuDNN serves them (one channel in, the bank's channels out): small
// 2-D and 3-D kernels, whose cost is writing the output, and a bank of
// 31×31 kernels (a Gabor bank).
func Banks() []Workload {
	var ws []Workload
	add := func(w Workload) { w.Set = "banks"; ws = append(ws, workload(w)) }
	add(Workload{ID: "B-2d-k3-bank64", Shape: []int{2048, 2048}, DType: "float32", Kernel: square(3, 2), Bank: 64})
	add(Workload{ID: "B-2d-k5-bank32", Shape: []int{2048, 2048}, DType: "float32", Kernel: square(5, 2), Bank: 32})
	add(Workload{ID: "B-3d-k3-bank16", Shape: []int{256, 256, 256}, DType: "float32", Kernel: square(3, 3), Bank: 16})
	add(Workload{ID: "B-2d-k31-bank16", Shape: []int{4096, 4096}, DType: "float32", Kernel: square(31, 2), Bank: 16})
	return ws
}

// Scale shrinks every axis but the channels by factor (for the CPU), never
// below the kernel (or, in valid mode, below the kernel plus one).
func Scale(w Workload, factor float64) Workload {
	if factor == 1 || factor <= 0 {
		return w
	}
	w.Shape = slices.Clone(w.Shape)
	spatial := len(w.Shape)
	if w.Channels > 1 {
		spatial--
	}
	for d := range spatial {
		least := 1
		if d < len(w.Kernel) {
			least = w.Kernel[d] + 1
		}
		w.Shape[d] = max(least, int(math.Round(float64(w.Shape[d])*factor)))
	}
	return workload(w)
}

// outShape is the output's shape without the bank axis.
func outShape(w Workload) []int {
	out := slices.Clone(w.Shape)
	if w.Mode == "valid" {
		for d, k := range w.Kernel {
			out[d] = max(0, out[d]-k+1)
		}
	}
	return out
}

// cost is the bytes moved once (input read, output written) and the
// multiply-adds of the workload's method.
func cost(w Workload) (bytes, madds int64) {
	in, _ := nd.ParseDType(w.DType)
	out, _ := nd.ParseDType(w.OutDType)
	inElems, outElems := prod(w.Shape), prod(outShape(w))
	bytes = inElems*int64(in.Size()) + outElems*int64(w.Bank)*int64(out.Size())
	if !w.Separable {
		return bytes, outElems * prod(w.Kernel) * int64(w.Bank)
	}
	// A pass per kernel axis, last first, each over the shape it produces.
	shape := slices.Clone(w.Shape)
	final := outShape(w)
	for d := len(w.Kernel) - 1; d >= 0; d-- {
		shape[d] = final[d]
		madds += prod(shape) * int64(w.Kernel[d])
	}
	return bytes, madds * int64(w.Bank)
}

func prod(s []int) int64 {
	n := int64(1)
	for _, v := range s {
		n *= int64(v)
	}
	return n
}

// String is a one-line description for tables.
func (w Workload) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v %s", w.ID, w.Shape, w.DType)
	if w.OutDType != w.DType {
		fmt.Fprintf(&b, "→%s", w.OutDType)
	}
	return b.String()
}
