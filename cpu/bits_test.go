package cpu

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// updateBits rewrites testdata/bits.txt from this build's results: run it
// on amd64 (go test ./cpu -run TestSameBitsEverywhere -update-bits), whose
// AVX2 and AVX-512 loops the other builds are held to.
var updateBits = flag.Bool("update-bits", false, "rewrite testdata/bits.txt from this build (amd64 only)")

// bitsCases are the problems of TestSameBitsEverywhere: random ones (every
// dtype, border, mode, rank, origin and bank, as enginetest.Random makes
// them) and larger float32 and float64 images whose rows run the loops'
// whole blocks, a 7×7 direct, a separable 9×9 and a bank of three 5×5
// kernels. Their values are made here, not by enginetest: an expression
// like rng.Float64()*2 − 1 may compile to one fused multiply-add on arm64
// and to two roundings on amd64 (the Go spec allows either), which would
// give the builds different inputs; the explicit conversions in uniform
// forbid that.
func bitsCases() []enginetest.Case {
	rng := rand.New(rand.NewPCG(20, 33))
	var cases []enginetest.Case
	for len(cases) < 60 {
		rank := 1 + rng.IntN(4)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.IntN([]int{40, 14, 8, 5}[rank-1])
		}
		krank := 1 + rng.IntN(rank)
		kshape := make([]int, krank)
		origin := make([]int, krank)
		for i := range kshape {
			kshape[i] = 1 + rng.IntN(6)
			origin[i] = rng.IntN(kshape[i]) - kshape[i]/2
		}
		var ks []nd.Kernel
		for range 1 + rng.IntN(2)*(1+rng.IntN(3)) {
			ks = append(ks, bitsKernel(rng, rng.IntN(3) == 0, kshape))
		}
		in := bitsArray(rng, nd.DTypes[rng.IntN(len(nd.DTypes))], shape)
		s := nd.Spec{
			Shape: shape, In: in.DType(), Kernels: ks, Axes: rng.Perm(rank)[:krank], Origin: origin,
			Border: nd.Border(rng.IntN(5)), CVal: uniform(rng, 10), Mode: nd.Mode(rng.IntN(3)),
			Convolve: rng.IntN(2) == 0, Out: nd.DTypes[rng.IntN(len(nd.DTypes))],
		}
		if _, err := s.Normalize(); err != nil {
			continue // e.g. valid mode with a kernel larger than the input
		}
		cases = append(cases, enginetest.Case{Name: fmt.Sprintf("random%d/%v%v/k%v", len(cases), in.DType(), shape, kshape), Spec: s, Input: in})
	}
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		in := bitsArray(rng, dt, []int{37, 83})
		for _, ks := range [][]nd.Kernel{
			{bitsKernel(rng, false, []int{7, 7})},
			{bitsKernel(rng, true, []int{9, 9})},
			{bitsKernel(rng, false, []int{5, 5}), bitsKernel(rng, false, []int{5, 5}), bitsKernel(rng, false, []int{5, 5})},
		} {
			s := nd.Spec{Shape: in.Shape, In: dt, Kernels: ks, Border: nd.Border(rng.IntN(5)), CVal: 1.5}
			cases = append(cases, enginetest.Case{Name: fmt.Sprintf("image%d/%v/k%v×%d", len(cases), dt, ks[0].Shape, len(ks)), Spec: s, Input: in})
		}
	}
	return cases
}

// uniform is a random value in [−r, r), rounded the same on every
// architecture (the conversion forbids fusing the multiply and subtract).
func uniform(rng *rand.Rand, r float64) float64 {
	return float64(rng.Float64()*2*r) - r
}

// bitsKernel is a random kernel of the given shape, dense with about a
// quarter of its weights zero, or separable.
func bitsKernel(rng *rand.Rand, separable bool, shape []int) nd.Kernel {
	k := nd.Kernel{Shape: shape}
	if separable {
		for _, n := range shape {
			f := make([]float64, n)
			for j := range f {
				f[j] = uniform(rng, 1)
			}
			k.Factors = append(k.Factors, f)
		}
		return k
	}
	k.Weights = make([]float64, product(shape))
	for i := range k.Weights {
		if rng.IntN(4) != 0 {
			k.Weights[i] = uniform(rng, 1)
		}
	}
	return k
}

// bitsArray is a random array of dt: integers over their whole range,
// floats in [−100, 100) with a few infinities, NaNs, subnormals and
// huge values among them.
func bitsArray(rng *rand.Rand, dt nd.DType, shape []int) nd.Array {
	v := make([]float64, product(shape))
	for i := range v {
		switch r := rng.IntN(50); {
		case dt.IsInteger():
			if lo, _ := dt.Range(); lo < 0 {
				v[i] = float64(int64(rng.Uint64()) >> (64 - 8*dt.Size()))
			} else {
				v[i] = float64(rng.Uint64() >> (64 - 8*dt.Size()))
			}
		case r == 0:
			v[i] = math.Inf(1 - 2*rng.IntN(2))
		case r == 1:
			v[i] = math.NaN()
		case r == 2:
			v[i] = math.Ldexp(uniform(rng, 1), -140)
		case r == 3:
			v[i] = math.Ldexp(uniform(rng, 1), 120)
		default:
			v[i] = uniform(rng, 100)
		}
	}
	a, err := nd.New(dt, shape...)
	if err != nil {
		panic(err)
	}
	nd.Store(a.Data, 0, 1, v)
	return a
}

// outputDigest is a SHA-256 of an output's values, every NaN counted as
// one (hardware and software NaNs differ in sign and payload).
func outputDigest(a nd.Array) string {
	h := sha256.New()
	switch a.DType() {
	case nd.Float16, nd.Float32, nd.Float64:
		var b [8]byte
		for _, v := range a.Float64s() {
			if v != v {
				v = math.NaN()
			}
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	default:
		h.Write(a.Bytes())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestSameBitsEverywhere: the engine's outputs on a fixed set of problems
// have the digests recorded from the amd64 build in testdata/bits.txt, on
// every build and instruction set (the amd64 SIMD loops, the pure-Go twins
// under noasm or NDCONV_SIMD=go, arm64's NEON under qemu-user): the same
// bits everywhere, as the exact FMA policy says.
func TestSameBitsEverywhere(t *testing.T) {
	got := map[string]string{}
	var names []string
	for _, c := range bitsCases() {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range methods {
			if !m.supports(p) {
				continue
			}
			dst, _ := nd.New(p.Out, p.FullShape()...)
			if err := m.new(p, Options{Workers: 2}).Execute(context.Background(), dst, c.Input); err != nil {
				t.Fatalf("%s %s: %v", c.Name, m.name, err)
			}
			name := c.Name + "/" + m.name
			names = append(names, name)
			got[name] = outputDigest(dst)
		}
	}
	const path = "testdata/bits.txt"
	if *updateBits {
		if runtime.GOARCH != "amd64" {
			t.Fatalf("-update-bits on %s: the digests are recorded from amd64", runtime.GOARCH)
		}
		var b strings.Builder
		b.WriteString("# Output digests of cpu.TestSameBitsEverywhere, recorded on amd64 (-update-bits).\n")
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s\n", n, got[n])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			i := strings.LastIndexByte(line, ' ') // names hold spaces ([3 4])
			want[line[:i]] = line[i+1:]
		}
	}
	if len(want) != len(got) {
		t.Fatalf("%s has %d digests, this test computes %d: the cases changed; rewrite it on amd64 with -update-bits", path, len(want), len(got))
	}
	for _, n := range names {
		if got[n] != want[n] {
			t.Errorf("%s on %s (%s loops): digest %s, amd64 gave %s", n, runtime.GOARCH, ISA(), got[n], want[n])
		}
	}
}
