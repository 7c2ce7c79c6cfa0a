package cpu

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	xcpu "golang.org/x/sys/cpu"
)

// Model is the processor's model name from /proc/cpuinfo, or the
// architecture where there is none.
func Model() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if key, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}

// Features names the SIMD extensions the processor reports and the
// engine's loops (ISA) in words: "AVX AVX2 FMA (the engine's loops: AVX2
// with FMA)".
func Features() string {
	var fs []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"SSE4.1", xcpu.X86.HasSSE41}, {"AVX", xcpu.X86.HasAVX}, {"AVX2", xcpu.X86.HasAVX2}, {"FMA", xcpu.X86.HasFMA},
		{"AVX-512F", xcpu.X86.HasAVX512F}, {"NEON", xcpu.ARM64.HasASIMD}, {"SVE", xcpu.ARM64.HasSVE},
	} {
		if f.has {
			fs = append(fs, f.name)
		}
	}
	found := "none detected"
	if len(fs) > 0 {
		found = strings.Join(fs, " ")
	}
	return found + " (the engine's loops: " + isaName(ISA()) + ")"
}

// isaName spells an instruction set of ISA's for people.
func isaName(isa string) string {
	switch isa {
	case "avx512":
		return "AVX-512"
	case "avx2":
		return "AVX2 with FMA"
	case "neon":
		return "NEON"
	case "go":
		return "pure Go"
	}
	return isa
}
