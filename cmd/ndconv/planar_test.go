package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// TestBankLayoutPlanar: --bank-layout planar writes a bank's .npy as
// (K, H, W), the interleaved file's values with the bank axis moved first
// and the library's planar result byte for byte — also where the input
// is large enough to stream (a planar bank runs whole) and for a folder
// of files (--out-dir), and into Zarr in blocks; one kernel is
// unchanged (into Zarr too).
func TestBankLayoutPlanar(t *testing.T) {
	dir := t.TempDir()
	in := ramp(nd.Uint8, 20, 30)
	writeNPY(t, filepath.Join(dir, "in.npy"), in)
	writeText(t, filepath.Join(dir, "k.csv"), "1, 2, 1\n0, 0, 0\n-1, -2, -1\n")
	writeText(t, filepath.Join(dir, "k2.csv"), "0, 1, 0\n1, -4, 1\n0, 1, 0\n")
	writeText(t, filepath.Join(dir, "k3.csv"), "1, 1, 1\n1, 1, 1\n1, 1, 1\n")
	bank := []string{"-k", "k.csv", "-k", "k2.csv", "-k", "k3.csv", "--dtype", "float32"}
	run := func(env []string, args ...string) {
		t.Helper()
		if code, _ := runWithEnv(t, dir, env, append([]string{"correlate", "-q"}, args...)...); code != 0 {
			t.Fatalf("%v %v: exit %d", env, args, code)
		}
	}
	read := func(name string) nd.Array {
		t.Helper()
		a, err := imageio.ReadNPYFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	run(nil, append(bank, "in.npy", "inter.npy")...)
	inter := read("inter.npy").Data.([]float32)
	const h, w, k = 20, 30, 3
	want := make([]float32, len(inter))
	for v := range h * w {
		for i := range k {
			want[i*h*w+v] = inter[v*k+i]
		}
	}
	kernels := []ndconv.Kernel{
		ndconv.NewKernel([]int{3, 3}, []float64{1, 2, 1, 0, 0, 0, -1, -2, -1}),
		ndconv.NewKernel([]int{3, 3}, []float64{0, 1, 0, 1, -4, 1, 0, 1, 0}),
		ndconv.NewKernel([]int{3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}),
	}
	lib, err := ndconv.Correlate(context.Background(), in, ndconv.Options{DType: ndconv.Float32, BankLayout: ndconv.Planar}, kernels...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lib.Data.([]float32), want) {
		t.Fatal("the library's planar bank is not the CLI's interleaved one moved")
	}
	for name, env := range map[string][]string{"whole": nil, "streamable": {"NDCONV_STREAM_THRESHOLD=1", "NDCONV_STREAM_CHUNK=512"}} {
		run(env, append(bank, "--bank-layout", "planar", "in.npy", name+".npy")...)
		got := read(name + ".npy")
		if !slices.Equal(got.Shape, []int{k, h, w}) || got.DType() != nd.Float32 {
			t.Errorf("%s: planar output %v %v, want float32 [%d %d %d]", name, got.DType(), got.Shape, k, h, w)
		} else if !slices.Equal(got.Data.([]float32), want) {
			t.Errorf("%s: planar output is not the interleaved one with its bank axis first", name)
		}
	}

	// Many files: each output planar, also where a GPU would bank the
	// files (the test hook banks them on the CPU): a bank plan's planar
	// output, (K, files, …), is not the files' outputs one after another,
	// so bankPlan declines it and the files run one at a time.
	os.Mkdir(filepath.Join(dir, "many"), 0o755)
	files := []string{"a.npy", "b.npy", "c.npy", "d.npy"}
	for _, n := range files {
		writeNPY(t, filepath.Join(dir, "many", n), in)
	}
	for outs, env := range map[string][]string{"outs": nil, "banked": {"NDCONV_TESTHOOK_BANK_CPU=1"}} {
		run(env, append(bank, "--bank-layout", "PLANAR", "many", "--out-dir", outs)...)
		for _, n := range files {
			if got := read(filepath.Join(outs, n)); !slices.Equal(got.Shape, []int{k, h, w}) || !slices.Equal(got.Data.([]float32), want) {
				t.Errorf("--out-dir %s %v: %v, want the planar bank", n, env, got.Shape)
			}
		}
	}

	// One kernel: no bank axis, the same file as interleaved.
	run(nil, "-k", "k.csv", "in.npy", "one.npy")
	run(nil, "-k", "k.csv", "--bank-layout", "planar", "in.npy", "one-planar.npy")
	a, _ := os.ReadFile(filepath.Join(dir, "one.npy"))
	b, _ := os.ReadFile(filepath.Join(dir, "one-planar.npy"))
	if !slices.Equal(a, b) {
		t.Error("one kernel, --bank-layout planar: a different file")
	}
	// A bank into Zarr, in blocks: the interleaved array's bank axis
	// moved first.
	run(nil, append(bank, "in.npy", "inter.zarr")...)
	run(nil, append(bank, "--bank-layout", "planar", "in.npy", "planar.zarr")...)
	zi, zp := readZarrOutput(t, filepath.Join(dir, "inter.zarr")), readZarrOutput(t, filepath.Join(dir, "planar.zarr"))
	if !slices.Equal(zi.Data.([]float32), inter) {
		t.Error("the interleaved bank into Zarr is not the .npy's")
	}
	if !slices.Equal(zp.Shape, []int{k, h, w}) || !slices.Equal(zp.Data.([]float32), want) {
		t.Errorf("a planar bank into Zarr: %v, want [%d %d %d] with the interleaved values moved", zp.Shape, k, h, w)
	}
	// Into Zarr too, in blocks: one kernel has no bank axis to move.
	run(nil, "-k", "k.csv", "in.npy", "one.zarr")
	run(nil, "-k", "k.csv", "--bank-layout", "planar", "in.npy", "one-planar.zarr")
	za, zb := readZarrOutput(t, filepath.Join(dir, "one.zarr")), readZarrOutput(t, filepath.Join(dir, "one-planar.zarr"))
	if !slices.Equal(za.Shape, zb.Shape) || !slices.Equal(za.Bytes(), zb.Bytes()) {
		t.Errorf("one kernel into Zarr, --bank-layout planar: %v, interleaved %v, or other values", zb.Shape, za.Shape)
	}
}

// TestBankLayoutErrors: an unknown --bank-layout is one line naming the
// flag, exit status 2 and no output.
func TestBankLayoutErrors(t *testing.T) {
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "in.npy"), ramp(nd.Float32, 12, 10))
	writeText(t, filepath.Join(dir, "k.csv"), "1, 2, 1\n")
	for _, c := range []struct {
		name, out, want string
		args            []string
	}{
		{"unknown value", "out.npy", `--bank-layout: unsupported bank layout "nchw" (supported: interleaved, planar)`, []string{"--bank-layout", "nchw"}},
		{"empty value", "out.npy", "--bank-layout", []string{"--bank-layout", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"correlate", "-k", "k.csv"}, c.args...), "in.npy", c.out)
			code, _, stderr := ndconvCLI(t, dir, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not mention %q", stderr, c.want)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 {
				t.Errorf("stderr has %d lines: %q", lines+1, stderr)
			}
			assertNoOutput(t, dir, c.out)
		})
	}
}
