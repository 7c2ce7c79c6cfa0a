package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/cpu"

	"github.com/ndconv/ndconv/bench"
	ndcpu "github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/opencl"
)

func newDevicesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "List the backends and devices ndconv can use",
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "cpu      %s\n", bench.CPUModel())
			fmt.Fprintf(w, "         %d cores (GOMAXPROCS %d), %s/%s, SIMD: %s\n",
				runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, simdFeatures())
			listCUDA(w)
			listOpenCL(w)
			return nil
		},
	}
}

// listCUDA prints each GPU with its limits, or why none is usable.
func listCUDA(w io.Writer) {
	if err := cuda.Available(); err != nil {
		fmt.Fprintf(w, "cuda     %s\n", strings.TrimPrefix(err.Error(), "cuda: "))
		return
	}
	devs, err := cuda.Devices()
	if err != nil {
		fmt.Fprintf(w, "cuda     unavailable: %v\n", err)
		return
	}
	for _, d := range devs {
		usable := ""
		if !d.ComputeCapability.Supported() {
			usable = " (too old: ndconv needs compute capability 6.0 or newer)"
		}
		fmt.Fprintf(w, "cuda:%d   %s, compute capability %v%s\n", d.Index, d.Name, d.ComputeCapability, usable)
		fmt.Fprintf(w, "         %d SMs, %.1f GiB memory (%.1f GiB free), %d KiB shared per block (%d opt-in), driver %v, NVRTC %v\n",
			d.SMs, float64(d.TotalMemory)/(1<<30), float64(d.FreeMemory)/(1<<30), d.MaxSharedPerBlock>>10, d.MaxSharedPerBlockOptin>>10, d.DriverVersion, d.NVRTCVersion)
	}
}

// listOpenCL prints each OpenCL device of each platform with its limits,
// or why there is none.
func listOpenCL(w io.Writer) {
	if err := opencl.Available(); err != nil {
		fmt.Fprintf(w, "opencl   %s\n", strings.TrimPrefix(err.Error(), "opencl: "))
		return
	}
	infos, err := opencl.Devices()
	if err != nil {
		fmt.Fprintf(w, "opencl   unavailable: %v\n", err)
		return
	}
	for _, d := range infos {
		fp64 := "no fp64"
		if d.FP64 {
			fp64 = "fp64"
		}
		fmt.Fprintf(w, "%-8s %s (%s), %s, %s\n", d.Spec(), d.Name, d.Type, d.PlatformName, d.Version)
		fmt.Fprintf(w, "         %d compute units, %.1f GiB memory, %d KiB local memory, work-groups up to %d, %s, driver %s\n",
			d.ComputeUnits, float64(d.GlobalMemory)/(1<<30), d.LocalMemory>>10, d.MaxWorkGroupSize, fp64, d.DriverVersion)
	}
}

func simdFeatures() string {
	var fs []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"SSE4.1", cpu.X86.HasSSE41}, {"AVX", cpu.X86.HasAVX}, {"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA},
		{"AVX-512F", cpu.X86.HasAVX512F}, {"NEON", cpu.ARM64.HasASIMD}, {"SVE", cpu.ARM64.HasSVE},
	} {
		if f.has {
			fs = append(fs, f.name)
		}
	}
	found := "none detected"
	if len(fs) > 0 {
		found = strings.Join(fs, " ")
	}
	return found + " (the engine's loops: " + isaName(ndcpu.ISA()) + ")"
}

// isaName spells the CPU engine's instruction set (cpu.ISA) for people.
func isaName(isa string) string {
	switch isa {
	case "avx512":
		return "AVX-512"
	case "avx2":
		return "AVX2 with FMA"
	case "go":
		return "pure Go"
	}
	return isa
}
