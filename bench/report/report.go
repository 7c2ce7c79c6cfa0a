package main

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
)

// Report is the input joined: workloads by id, each result in the column of
// its system (and device, where one system ran on several).
type Report struct {
	In        *Input
	Workloads []*Workload // unique by id, in input order
	Sets      []string    // sorted
	// Rooflines holds, per device, the best copy and FMA figures measured
	// (the largest, hence the most demanding floor); Measured counts the
	// roofline lines seen per device.
	Rooflines map[string]Roofline
	Measured  map[string]int
	Devices   []string // every device of a roofline or a result line, sorted
	Columns   []Column // ndconv's systems first, then peers, alphabetically
	// Warnings are joins that failed: duplicate or unknown ids.
	Warnings []string

	byID  map[string]*Workload
	cells map[cellKey]*Result
}

// Column is one system's column of the tables.
type Column struct {
	System, Device string
	// Label is the system's name, with the device where the system ran on
	// more than one.
	Label string
}

// IsNdconv reports whether the column is one of ndconv's own systems.
func (c Column) IsNdconv() bool { return strings.HasPrefix(c.System, "ndconv") }

type cellKey struct {
	system, device, id string
}

// join builds the report of in.
func join(in *Input) *Report {
	rep := &Report{
		In:        in,
		Rooflines: map[string]Roofline{},
		Measured:  map[string]int{},
		byID:      map[string]*Workload{},
		cells:     map[cellKey]*Result{},
	}
	sets := map[string]bool{}
	for i := range in.Workloads {
		w := &in.Workloads[i]
		if old, ok := rep.byID[w.ID]; ok {
			if !reflect.DeepEqual(old, w) {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("workload %s given twice with different fields; the first is used", w.ID))
			}
			continue
		}
		rep.byID[w.ID] = w
		rep.Workloads = append(rep.Workloads, w)
		sets[w.Set] = true
	}
	for s := range sets {
		rep.Sets = append(rep.Sets, s)
	}
	slices.Sort(rep.Sets)

	devices := map[string]bool{}
	for _, rf := range in.Rooflines {
		best, ok := rep.Rooflines[rf.Device]
		if !ok {
			best = rf
		}
		best.CopyGBps = max(best.CopyGBps, rf.CopyGBps)
		best.FMAGFlops = max(best.FMAGFlops, rf.FMAGFlops)
		rep.Rooflines[rf.Device] = best
		rep.Measured[rf.Device]++
		devices[rf.Device] = true
	}

	systemDevices := map[string]map[string]bool{}
	for i := range in.Results {
		r := &in.Results[i]
		if _, ok := rep.byID[r.ID]; !ok {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("result of %s for %s: no workload line with that id; skipped", r.System, r.ID))
			continue
		}
		k := cellKey{r.System, r.Device, r.ID}
		if _, ok := rep.cells[k]; ok {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("result of %s on %q for %s given twice; the first is used", r.System, r.Device, r.ID))
			continue
		}
		rep.cells[k] = r
		if systemDevices[r.System] == nil {
			systemDevices[r.System] = map[string]bool{}
		}
		systemDevices[r.System][r.Device] = true
		if r.Device != "" {
			devices[r.Device] = true
		}
	}
	for d := range devices {
		rep.Devices = append(rep.Devices, d)
	}
	slices.Sort(rep.Devices)

	for sys, devs := range systemDevices {
		for dev := range devs {
			label := sys
			if len(devs) > 1 {
				label = fmt.Sprintf("%s (%s)", sys, dev)
			}
			rep.Columns = append(rep.Columns, Column{System: sys, Device: dev, Label: label})
		}
	}
	slices.SortFunc(rep.Columns, compareColumns)
	return rep
}

// compareColumns orders "ndconv" first, the other ndconv systems next, then
// the peers; alphabetically within each, then by device.
func compareColumns(a, b Column) int {
	rank := func(c Column) int {
		switch {
		case c.System == "ndconv":
			return 0
		case c.IsNdconv():
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	if c := strings.Compare(a.System, b.System); c != 0 {
		return c
	}
	return strings.Compare(a.Device, b.Device)
}

// SetWorkloads returns the workloads of set, in input order.
func (rep *Report) SetWorkloads(set string) []*Workload {
	var ws []*Workload
	for _, w := range rep.Workloads {
		if w.Set == set {
			ws = append(ws, w)
		}
	}
	return ws
}

// SetColumns returns the columns with at least one result in set.
func (rep *Report) SetColumns(set string) []Column {
	var cols []Column
	ws := rep.SetWorkloads(set)
	for _, c := range rep.Columns {
		for _, w := range ws {
			if rep.Result(c, w) != nil {
				cols = append(cols, c)
				break
			}
		}
	}
	return cols
}

// Result returns the result of column c for w, or nil.
func (rep *Report) Result(c Column, w *Workload) *Result {
	return rep.cells[cellKey{c.System, c.Device, w.ID}]
}

// Ms returns the median time of column c on w in milliseconds; false where
// there is no result or it is null.
func (rep *Report) Ms(c Column, w *Workload) (float64, bool) {
	r := rep.Result(c, w)
	if r == nil || r.MsMedian == nil {
		return 0, false
	}
	return *r.MsMedian, true
}

// Pct returns the % of roofline of column c on w: the result's own
// pct_roofline, else computed from the roofline of the result's device.
// False where there is no time or no roofline for the device.
func (rep *Report) Pct(c Column, w *Workload) (float64, bool) {
	r := rep.Result(c, w)
	if r == nil || r.MsMedian == nil {
		return 0, false
	}
	if r.PctRoofline != nil {
		return *r.PctRoofline, true
	}
	rf, ok := rep.Rooflines[r.Device]
	if !ok {
		return 0, false
	}
	return pctRoofline(w, rf, *r.MsMedian), true
}

// pctRoofline is 100 × floor ÷ measured time, for a median of ms
// milliseconds (bench.Roofline.Percent).
func pctRoofline(w *Workload, rf Roofline, ms float64) float64 {
	return rf.Percent(w.Bytes, w.Madds, ms)
}

// Ratio returns the best peer's time over the best time of the system named
// exactly "ndconv" on w (above 1: ndconv is faster), and the best peer's
// column; false where either time is missing.
func (rep *Report) Ratio(w *Workload) (float64, Column, bool) {
	nd, peer := math.Inf(1), math.Inf(1)
	var best Column
	for _, c := range rep.Columns {
		ms, ok := rep.Ms(c, w)
		switch {
		case !ok:
		case c.System == "ndconv":
			nd = min(nd, ms)
		case !c.IsNdconv() && ms < peer:
			peer, best = ms, c
		}
	}
	if math.IsInf(nd, 1) || math.IsInf(peer, 1) {
		return 0, Column{}, false
	}
	return peer / nd, best, true
}

// RefChecksum returns the checksum of the first "ndconv" column that timed w.
func (rep *Report) RefChecksum(w *Workload) (Column, float64, bool) {
	for _, c := range rep.Columns {
		if c.System != "ndconv" {
			continue
		}
		if r := rep.Result(c, w); r != nil && r.MsMedian != nil && r.Checksum != nil {
			return c, *r.Checksum, true
		}
	}
	return Column{}, 0, false
}

// checksumDiffers reports whether a and ref differ by more than 1e-3
// relative, or 1e-3 absolute where both are near zero.
func checksumDiffers(a, ref float64) bool {
	return !(math.Abs(a-ref) <= 1e-3*max(1, math.Abs(a), math.Abs(ref)))
}
