package bench

import (
	"fmt"

	"github.com/ndconv/ndconv/nd"
)

// The data of a workload is computed, not stored, by formulas every
// system evaluates the same way (bench/README.md): no files to move to the
// GPU host, and the same bits in every system.

// Input is the workload's input array: element i (flat, C order) is
// (i·7919) mod 251 for uint8 and ((i·7919) mod 1009)/1009 for float32.
func Input(w Workload) (nd.Array, error) {
	dt, err := nd.ParseDType(w.DType)
	if err != nil {
		return nd.Array{}, err
	}
	a, err := nd.New(dt, w.Shape...)
	if err != nil {
		return nd.Array{}, err
	}
	switch d := a.Data.(type) {
	case []uint8:
		for i := range d {
			d[i] = uint8(int64(i) * 7919 % 251)
		}
	case []float32:
		for i := range d {
			d[i] = float32(float64(int64(i)*7919%1009) / 1009)
		}
	default:
		return nd.Array{}, &nd.UnsupportedError{What: "workload dtype", Value: w.DType, Supported: "uint8, float32"}
	}
	return a, nil
}

// Kernels are the workload's bank: full kernels with float32-rounded
// weights r/Σr, r = (j·31 + b·17) mod 23 + 1 for tap j of kernel b; or
// float64 factors r/Σr, r = (j·31 + a·17 + b·5) mod 23 + 1 for tap j of
// kernel axis a.
func Kernels(w Workload) []nd.Kernel {
	var ks []nd.Kernel
	for b := range w.Bank {
		if w.Separable {
			factors := make([][]float64, len(w.Kernel))
			for a, k := range w.Kernel {
				factors[a] = normalised(k, func(j int) int { return (j*31+a*17+b*5)%23 + 1 })
			}
			ks = append(ks, nd.Kernel{Shape: w.Kernel, Factors: factors})
			continue
		}
		weights := normalised(int(prod(w.Kernel)), func(j int) int { return (j*31+b*17)%23 + 1 })
		for j, v := range weights {
			weights[j] = float64(float32(v))
		}
		ks = append(ks, nd.Kernel{Shape: w.Kernel, Weights: weights})
	}
	return ks
}

// normalised is r(j)/Σr for j < n, in float64.
func normalised(n int, r func(j int) int) []float64 {
	out := make([]float64, n)
	sum := 0.0
	for j := range out {
		out[j] = float64(r(j))
		sum += out[j]
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}

// Spec is the workload as an ndconv request.
func Spec(w Workload) (nd.Spec, error) {
	in, err := nd.ParseDType(w.DType)
	if err != nil {
		return nd.Spec{}, err
	}
	out, err := nd.ParseDType(w.OutDType)
	if err != nil {
		return nd.Spec{}, err
	}
	border, err := nd.ParseBorder(w.Border)
	if err != nil {
		return nd.Spec{}, err
	}
	mode, err := nd.ParseMode(w.Mode)
	if err != nil {
		return nd.Spec{}, err
	}
	if len(w.Kernel) > len(w.Shape) {
		return nd.Spec{}, fmt.Errorf("workload %s: a %d-D kernel on a %d-D input", w.ID, len(w.Kernel), len(w.Shape))
	}
	return nd.Spec{Shape: w.Shape, In: in, Out: out, Kernels: Kernels(w), Border: border, CVal: w.CVal, Mode: mode}, nil
}

// Checksum is the float64 sum of every element, the figure systems compare
// to show they computed the same thing.
func Checksum(a nd.Array) float64 {
	sum := 0.0
	chunk := make([]float64, 1<<16)
	for off, n := 0, a.Len(); off < n; off += len(chunk) {
		part := chunk[:min(len(chunk), n-off)]
		nd.Load(part, a.Data, off)
		for _, v := range part {
			sum += v
		}
	}
	return sum
}
