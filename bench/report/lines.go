package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ndconv/ndconv/bench"
)

// Workload is a line of kind "workload" (bench/README.md, section 1),
// as `ndconv bench` writes it.
type Workload = bench.Workload

// Result is a line of kind "result" (bench/README.md, section 2). The
// optional and nullable figures are pointers: nil means absent or null.
type Result struct {
	Kind        string   `json:"kind"`
	System      string   `json:"system"`
	Device      string   `json:"device"`
	ID          string   `json:"id"`
	Method      string   `json:"method"`
	MsMedian    *float64 `json:"ms_median"`
	MsMin       *float64 `json:"ms_min"`
	Repeats     int      `json:"repeats"`
	Checksum    *float64 `json:"checksum"`
	Gbps        *float64 `json:"gbps"`
	Gflops      *float64 `json:"gflops"`
	PctRoofline *float64 `json:"pct_roofline"`
	Note        string   `json:"note"`
}

// Roofline is a line of kind "roofline" (bench/README.md, section 3); its
// Floor and Percent are the roofline arithmetic of every table.
type Roofline = bench.Roofline

// Meta is a line of kind "meta": how and where a run was made.
type Meta struct {
	Kind    string `json:"kind"`
	Command string `json:"command"`
	Date    string `json:"date"`
	Host    string `json:"host"`
}

// Input is everything read from the JSON-lines files, in input order.
type Input struct {
	Files     []string
	Workloads []Workload
	Results   []Result
	Rooflines []Roofline
	Metas     []Meta
	// Problems lists the malformed lines, each "file:line: why".
	Problems []string
}

// maxLine bounds one JSON line; a longer one is reported as malformed input.
const maxLine = 16 << 20

// read appends the lines of r, named name in messages, to in. Malformed
// lines are recorded in in.Problems and skipped; lines of an unknown kind
// are ignored. The returned error is for a failure to read r at all.
func (in *Input) read(name string, r io.Reader) error {
	in.Files = append(in.Files, name)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := in.parseLine(sc.Bytes()); err != nil {
			in.Problems = append(in.Problems, fmt.Sprintf("%s:%d: %v", name, n, err))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s:%d: %w", name, n+1, err)
	}
	return nil
}

// parseLine decodes one line into in. Blank lines are allowed.
func (in *Input) parseLine(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var head struct {
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	if head.Kind == nil {
		return errors.New(`no "kind"`)
	}
	switch *head.Kind {
	case "workload":
		var w Workload
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		if err := checkWorkload(&w); err != nil {
			return err
		}
		in.Workloads = append(in.Workloads, w)
	case "result":
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if err := r.check(); err != nil {
			return err
		}
		in.Results = append(in.Results, r)
	case "roofline":
		var r Roofline
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if err := checkRoofline(&r); err != nil {
			return err
		}
		in.Rooflines = append(in.Rooflines, r)
	case "meta":
		var m Meta
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		in.Metas = append(in.Metas, m)
	}
	return nil
}

func checkWorkload(w *Workload) error {
	switch {
	case w.ID == "":
		return errors.New("workload without id")
	case w.Set == "":
		return fmt.Errorf("workload %s: no set", w.ID)
	case len(w.Shape) == 0 || len(w.Kernel) == 0:
		return fmt.Errorf("workload %s: empty shape or kernel", w.ID)
	case w.Bytes < 0 || w.Madds < 0:
		return fmt.Errorf("workload %s: negative bytes or madds", w.ID)
	}
	return nil
}

func (r *Result) check() error {
	switch {
	case r.System == "" || r.ID == "":
		return errors.New("result without system or id")
	case r.MsMedian != nil && !(*r.MsMedian > 0 && !math.IsInf(*r.MsMedian, 0)):
		return fmt.Errorf("result %s %s: ms_median %v is not a positive time", r.System, r.ID, *r.MsMedian)
	}
	return nil
}

func checkRoofline(r *Roofline) error {
	switch {
	case r.Device == "":
		return errors.New("roofline without device")
	case !(r.CopyGBps > 0) || !(r.FMAGFlops > 0):
		return fmt.Errorf("roofline %s: copy_gbps and fma_gflops must be positive", r.Device)
	}
	return nil
}
