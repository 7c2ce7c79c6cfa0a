package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/results.golden.md")

const sample = "testdata/sample.jsonl"

// loadSample joins testdata/sample.jsonl.
func loadSample(t *testing.T) *Report {
	t.Helper()
	in := &Input{}
	if err := readFile(in, sample); err != nil {
		t.Fatal(err)
	}
	if len(in.Problems) > 0 {
		t.Fatalf("problems in %s: %q", sample, in.Problems)
	}
	return join(in)
}

// runSample runs the command on the sample into a new directory.
func runSample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var stderr bytes.Buffer
	if err := run([]string{"-o", dir, sample}, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		t.Errorf("run wrote to stderr:\n%s", stderr.Bytes())
	}
	return dir
}

func workload(t *testing.T, rep *Report, id string) *Workload {
	t.Helper()
	w, ok := rep.byID[id]
	if !ok {
		t.Fatalf("no workload %s", id)
	}
	return w
}

func column(t *testing.T, rep *Report, label string) Column {
	t.Helper()
	for _, c := range rep.Columns {
		if c.Label == label {
			return c
		}
	}
	t.Fatalf("no column %s", label)
	return Column{}
}

func TestParseSample(t *testing.T) {
	rep := loadSample(t)
	in := rep.In
	if got, want := len(in.Workloads), 13; got != want {
		t.Errorf("%d workloads, want %d", got, want)
	}
	if got, want := len(in.Rooflines), 2; got != want {
		t.Errorf("%d rooflines, want %d", got, want)
	}
	if got, want := len(in.Metas), 1; got != want {
		t.Errorf("%d meta lines, want %d", got, want)
	}
	if want := []string{"anchors", "seeds"}; !slices.Equal(rep.Sets, want) {
		t.Errorf("sets %q, want %q", rep.Sets, want)
	}
	var labels []string
	for _, c := range rep.Columns {
		labels = append(labels, c.Label)
	}
	if want := []string{"ndconv", "ndconv-opencl", "cudnn", "cupy", "opencv", "scipy"}; !slices.Equal(labels, want) {
		t.Errorf("columns %q, want %q", labels, want)
	}
	if want := []string{"AMD EPYC 7763 64-Core Processor", "NVIDIA H100 80GB HBM3"}; !slices.Equal(rep.Devices, want) {
		t.Errorf("devices %q, want %q", rep.Devices, want)
	}
	r := rep.Result(column(t, rep, "scipy"), workload(t, rep, "A-2d-k15"))
	if r == nil || r.MsMedian != nil || r.Checksum != nil || r.Note == "" {
		t.Errorf("scipy A-2d-k15: %+v, want a null result with a note", r)
	}
}

func TestMalformed(t *testing.T) {
	const text = `{"kind":"workload","set":"s","id":"a","shape":[4],"kernel":[3],"bytes":8,"madds":12}

{"kind":"result"
{"set":"s"}
{"kind":"result","id":"a"}
{"kind":"result","system":"x","id":"a","ms_median":0}
{"kind":"roofline","device":"d","copy_gbps":0,"fma_gflops":1}
{"kind":"workload","set":"s","id":"b","shape":[4],"kernel":[3],"bytes":"8"}
{"kind":"progress","what":"ignored"}
{"kind":"result","system":"x","id":"a","ms_median":null,"note":"cannot"}
`
	in := &Input{}
	if err := in.read("x.jsonl", strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, p := range in.Problems {
		where = append(where, p[:strings.Index(p, ": ")])
	}
	want := []string{"x.jsonl:3", "x.jsonl:4", "x.jsonl:5", "x.jsonl:6", "x.jsonl:7", "x.jsonl:8"}
	if !slices.Equal(where, want) {
		t.Errorf("problems at %q, want %q\n%s", where, want, strings.Join(in.Problems, "\n"))
	}
	if len(in.Workloads) != 1 || len(in.Results) != 1 || len(in.Rooflines) != 0 {
		t.Errorf("kept %d workloads, %d results, %d rooflines; want 1, 1, 0",
			len(in.Workloads), len(in.Results), len(in.Rooflines))
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadError(t *testing.T) {
	in := &Input{}
	err := in.read("y.jsonl", io.MultiReader(strings.NewReader("{\"kind\":\"meta\"}\n"), failingReader{}))
	if err == nil || !strings.Contains(err.Error(), "read y.jsonl:") {
		t.Errorf("err = %v, want one naming y.jsonl", err)
	}
}

func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{
		{sample},
		{"-o", t.TempDir()},
		{"-o", t.TempDir(), "testdata/no-such-file.jsonl"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

func TestPctRoofline(t *testing.T) {
	rf := Roofline{CopyGBps: 2978, FMAGFlops: 51200}
	for _, tc := range []struct {
		name         string
		bytes, madds int64
		ms, want     float64
	}{
		// Memory-bound: 33554432 B ÷ 2.978e12 B/s = 11.267 µs; 0.044 ms.
		{"memory", 33554432, 37748736, 0.044, 100 * (33554432 / 2.978e12) / 0.044e-3},
		// Compute-bound: 2·1e12 FLOP ÷ 5.12e13 FLOP/s = 39.0625 ms; 78.125 ms.
		{"compute", 1000, 1e12, 78.125, 50},
	} {
		w := &Workload{Bytes: tc.bytes, Madds: tc.madds}
		if got := pctRoofline(w, rf, tc.ms); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: pct = %v, want %v", tc.name, got, tc.want)
		}
	}

	rep := loadSample(t)
	// cupy's line has no pct_roofline: computed from the H100 roofline.
	w := workload(t, rep, "A-2d-k3")
	got, ok := rep.Pct(column(t, rep, "cupy"), w)
	if want := 100 * (33554432 / 2.978e12) / 0.044e-3; !ok || math.Abs(got-want) > 1e-9*want {
		t.Errorf("cupy A-2d-k3: pct = %v, %t; want %v", got, ok, want)
	}
	// opencv's, from the CPU's roofline (180 GB/s).
	got, ok = rep.Pct(column(t, rep, "opencv"), w)
	if want := 100 * (33554432 / 180e9) / 2.1e-3; !ok || math.Abs(got-want) > 1e-9*want {
		t.Errorf("opencv A-2d-k3: pct = %v, %t; want %v", got, ok, want)
	}
	// ndconv's line gives its own.
	if got, ok := rep.Pct(column(t, rep, "ndconv"), w); !ok || got != 36.3 {
		t.Errorf("ndconv A-2d-k3: pct = %v, %t; want the line's 36.3", got, ok)
	}
	// A null result has none.
	if _, ok := rep.Pct(column(t, rep, "scipy"), workload(t, rep, "A-2d-k15")); ok {
		t.Error("scipy A-2d-k15: a pct for a null result")
	}
}

func TestRatio(t *testing.T) {
	rep := loadSample(t)
	for _, tc := range []struct {
		id   string
		want float64 // 0: none
		peer string
	}{
		{"A-2d-k3", 0.025 / 0.031, "cudnn"},    // a peer faster than ndconv
		{"A-2d-u8-k7", 3.3 / 0.041, "opencv"},  // the only peer, on another device
		{"A-2d-sep-k7", 0.070 / 0.034, "cupy"}, // ndconv-opencl is no peer
		{"A-3d-k7", 0, ""},                     // no peer
		{"S002", 0, ""},                        // the peer's result is null
		{"S001-w8", 0.16 / 0.071, "cupy"},
	} {
		got, peer, ok := rep.Ratio(workload(t, rep, tc.id))
		if tc.want == 0 {
			if ok {
				t.Errorf("%s: ratio %v, want none", tc.id, got)
			}
			continue
		}
		if !ok || math.Abs(got-tc.want) > 1e-12*tc.want || peer.Label != tc.peer {
			t.Errorf("%s: ratio %v (%s), %t; want %v (%s)", tc.id, got, peer.Label, ok, tc.want, tc.peer)
		}
	}
}

func TestChecksumDiffers(t *testing.T) {
	for _, tc := range []struct {
		a, ref float64
		want   bool
	}{
		{1000, 1000.5, false},
		{1000, 1002, true},
		{-1000, 1000, true},
		{0, 0.0005, false},
		{0, 0.002, true},
		{5.339349e8, 5.339349e8 * (1 + 2e-7), false},
		{5.339349e8, 5.339349e8 * 1.013, true},
	} {
		if got := checksumDiffers(tc.a, tc.ref); got != tc.want {
			t.Errorf("checksumDiffers(%v, %v) = %t, want %t", tc.a, tc.ref, got, tc.want)
		}
	}
}

func TestFootnotes(t *testing.T) {
	dir := runSample(t)
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors, seeds, ok := strings.Cut(string(md), "\n## seeds\n")
	if !ok {
		t.Fatal("no seeds section")
	}
	for _, want := range []string{
		"| A-2d-u8-k7 |",
		"3.30 (3.11%) ≠[3][4] |",
		"\n1. cudnn: writes NCHW\n",
		"\n2. scipy: skipped: over the time budget\n",
		"\n3. checksum differs: opencv gives 5.4087605e+08 for A-2d-u8-k7, ndconv gives 5.339349e+08\n",
		"\n4. opencv: BORDER_REFLECT_101 instead of reflect\n",
		"| —[2] |",
	} {
		if !strings.Contains(anchors, want) {
			t.Errorf("anchors section lacks %q", want)
		}
	}
	if n := strings.Count(anchors, "≠["); n != 1 {
		t.Errorf("%d checksum marks in anchors, want 1 (ndconv-opencl's is within 1e-3)", n)
	}
	if n := strings.Count(anchors, "writes NCHW"); n != 1 {
		t.Errorf("cudnn's note given %d times, want once", n)
	}
	// Footnotes are numbered per table.
	if !strings.Contains(seeds, "| —[1] |") || !strings.Contains(seeds, "\n1. cudnn: no uint8 input with float32 output\n") {
		t.Errorf("seeds section lacks cudnn's null footnote:\n%s", seeds)
	}
}

func TestGolden(t *testing.T) {
	dir := runSample(t)
	got, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/results.golden.md"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("results.md differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestCharts(t *testing.T) {
	dir := runSample(t)
	want := []string{
		"anchors-2d-float32-full.svg",
		"anchors-2d-float32-sep.svg",
		"anchors-2d-uint8-full.svg",
		"anchors-roofline.svg",
		"s001-width.svg",
		"seeds-roofline.svg",
	}
	got, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("charts %q, want %q", got, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range got {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("<?xml")) && !bytes.HasPrefix(b, []byte("<svg")) {
			t.Errorf("%s starts %q, not like SVG", name, b[:min(len(b), 20)])
		}
		if err := wellFormed(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !bytes.Contains(md, []byte("]("+name+")")) {
			t.Errorf("results.md does not link %s", name)
		}
	}
}

// wellFormed checks that b is XML with an <svg> root.
func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		return errors.New("root element is " + root + ", not svg")
	}
	return nil
}

func TestDeterministic(t *testing.T) {
	a, b := runSample(t), runSample(t)
	files, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no output")
	}
	for _, f := range files {
		x, err := os.ReadFile(filepath.Join(a, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", f.Name())
		}
	}
}

func TestSeveralDevices(t *testing.T) {
	const text = `{"kind":"workload","set":"s","id":"a","shape":[4],"kernel":[3],"bytes":8,"madds":12}
{"kind":"result","system":"ndconv","device":"gpu","id":"a","ms_median":2,"checksum":10}
{"kind":"result","system":"ndconv","device":"cpu","id":"a","ms_median":1,"checksum":11}
{"kind":"result","system":"ndconv","device":"cpu","id":"a","ms_median":5,"checksum":10}
{"kind":"result","system":"peer","device":"cpu","id":"a","ms_median":3,"checksum":10}
{"kind":"result","system":"peer","device":"cpu","id":"nope","ms_median":3}
`
	in := &Input{}
	if err := in.read("z.jsonl", strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	rep := join(in)
	var labels []string
	for _, c := range rep.Columns {
		labels = append(labels, c.Label)
	}
	if want := []string{"ndconv (cpu)", "ndconv (gpu)", "peer"}; !slices.Equal(labels, want) {
		t.Errorf("columns %q, want %q", labels, want)
	}
	if len(rep.Warnings) != 2 {
		t.Errorf("warnings %q, want the duplicate and the unknown id", rep.Warnings)
	}
	w := rep.byID["a"]
	if got, _, ok := rep.Ratio(w); !ok || got != 3 {
		t.Errorf("ratio %v, want 3 (the fastest ndconv)", got)
	}
	// The reference checksum is the first ndconv column's; the other
	// ndconv differs from it.
	var md bytes.Buffer
	if err := writeMarkdown(&md, rep, "today", nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "checksum differs: ndconv (gpu) gives 10 for a, ndconv (cpu) gives 11") {
		t.Errorf("no checksum footnote for ndconv (gpu):\n%s", md.String())
	}
	if !strings.Contains(md.String(), "## Input problems") {
		t.Errorf("no input problems section:\n%s", md.String())
	}
}

func TestFamilyNames(t *testing.T) {
	mk := func(id string, shape []int, k int) *Workload {
		return &Workload{Set: "anchors", ID: id, Shape: shape, DType: "float32", OutDType: "float32",
			Kernel: []int{k, k}, Bank: 1, Channels: 1, Mode: "same", Border: "reflect"}
	}
	ws := []*Workload{
		mk("big-k3", []int{2048, 2048}, 3),
		mk("small-k3", []int{512, 512}, 3),
		mk("big-k7", []int{2048, 2048}, 7),
		mk("small-k7", []int{512, 512}, 7),
		mk("lone", []int{64, 64}, 5),
	}
	fs := families(ws)
	if len(fs) != 2 {
		t.Fatalf("%d families, want 2 (a single width makes none)", len(fs))
	}
	got := familyNames(fs)
	want := []string{"anchors-2d-float32-full-2048x2048.svg", "anchors-2d-float32-full-512x512.svg"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

func TestSig3(t *testing.T) {
	for v, want := range map[float64]string{
		0.031: "0.0310", 0.19: "0.190", 1.9: "1.90", 41: "41.0", 1234.4: "1234", 0.000123: "0.000123",
	} {
		if got := sig3(v); got != want {
			t.Errorf("sig3(%v) = %q, want %q", v, got, want)
		}
	}
}
