package main

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is one SVG file written beside results.md.
type Chart struct {
	Set   string // the set whose section links the chart
	File  string // the file name, relative to results.md
	Title string
}

// A family is the workloads of a set that differ only in kernel width.
type family struct {
	set     string
	members []*Workload // sorted by width
}

// familyKey is every workload field but the id and the kernel width.
// Square kernels (all extents equal) of one rank form a family; any other
// kernel is a family of its own.
type familyKey struct {
	set, shape, dtype, outDtype string
	separable                   bool
	bank, channels              int
	mode, border                string
	cval                        float64
	rounds                      int
	transfers                   bool
	rank                        int
	nonSquare                   string
}

func keyOf(w *Workload) familyKey {
	k := familyKey{
		set: w.Set, shape: dims(w.Shape), dtype: w.DType, outDtype: w.OutDType,
		separable: w.Separable, bank: w.Bank, channels: w.Channels,
		mode: w.Mode, border: w.Border, cval: w.CVal,
		rounds: w.Rounds, transfers: w.Transfers, rank: len(w.Kernel),
	}
	for _, e := range w.Kernel {
		if e != w.Kernel[0] {
			k.nonSquare = dims(w.Kernel)
		}
	}
	return k
}

// width is the kernel width that a family varies: the first extent.
func width(w *Workload) int { return w.Kernel[0] }

// families returns the families of set with at least two widths, in the
// order of their first workload.
func families(ws []*Workload) []family {
	var keys []familyKey
	byKey := map[familyKey]*family{}
	for _, w := range ws {
		k := keyOf(w)
		f, ok := byKey[k]
		if !ok {
			f = &family{set: w.Set}
			byKey[k] = f
			keys = append(keys, k)
		}
		f.members = append(f.members, w)
	}
	var out []family
	for _, k := range keys {
		f := byKey[k]
		slices.SortStableFunc(f.members, func(a, b *Workload) int { return cmp.Compare(width(a), width(b)) })
		if width(f.members[0]) != width(f.members[len(f.members)-1]) {
			out = append(out, *f)
		}
	}
	return out
}

// familyNames names each family's chart file, "anchors-2d-float32-full", with
// more of the fields only where two families would otherwise collide.
func familyNames(fs []family) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		w := f.members[0]
		parts := []string{f.set, fmt.Sprintf("%dd", len(w.Kernel)), w.DType}
		if w.OutDType != "" && w.OutDType != w.DType {
			parts = append(parts, w.OutDType)
		}
		if w.Separable {
			parts = append(parts, "sep")
		} else {
			parts = append(parts, "full")
		}
		if w.Channels > 1 {
			parts = append(parts, fmt.Sprintf("c%d", w.Channels))
		}
		if w.Bank > 1 {
			parts = append(parts, fmt.Sprintf("bank%d", w.Bank))
		}
		names[i] = strings.Join(parts, "-")
	}
	extras := []func(w *Workload) string{
		func(w *Workload) string { return strings.Join(strings.Split(dims(w.Shape), "×"), "x") },
		func(w *Workload) string { return w.Mode + "-" + w.Border },
		func(w *Workload) string { return fmt.Sprintf("r%d-%t", w.Rounds, w.Transfers) },
	}
	for _, extra := range extras {
		count := map[string]int{}
		for _, n := range names {
			count[n]++
		}
		for i, f := range fs {
			if count[names[i]] > 1 {
				names[i] += "-" + extra(f.members[0])
			}
		}
	}
	seen := map[string]int{}
	for i, n := range names {
		seen[n]++
		if seen[n] > 1 {
			names[i] = fmt.Sprintf("%s-%d", n, seen[n])
		}
		names[i] = sanitize(names[i]) + ".svg"
	}
	return names
}

// sanitize keeps file names to letters, digits, '-', '_' and '.'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

func familyTitle(w *Workload) string {
	kind := "full"
	if w.Separable {
		kind = "separable"
	}
	s := fmt.Sprintf("%s: %s %s, %d-D %s kernels", w.Set, dims(w.Shape), dtypes(w), len(w.Kernel), kind)
	if w.Channels > 1 {
		s += fmt.Sprintf(", %d channels", w.Channels)
	}
	if w.Bank > 1 {
		s += fmt.Sprintf(", bank %d", w.Bank)
	}
	return s + ", " + modeBorder(w)
}

// writeCharts writes the charts of rep into dir and returns them in the
// order results.md shows them.
func writeCharts(dir string, rep *Report) ([]Chart, error) {
	var charts []Chart
	add := func(set, file, title string, p *plot.Plot, leg *plot.Legend, w, h vg.Length) error {
		if err := saveSVG(p, leg, w, h, filepath.Join(dir, file)); err != nil {
			return err
		}
		charts = append(charts, Chart{Set: set, File: file, Title: title})
		return nil
	}

	fs := families(rep.SetWorkloads("anchors"))
	for i, name := range familyNames(fs) {
		title := familyTitle(fs[i].members[0])
		p, leg, ok := widthChart(rep, title, fs[i].members)
		if !ok {
			continue
		}
		if err := add("anchors", name, title, p, leg, 8*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
	}

	var s001 []*Workload
	for _, w := range rep.SetWorkloads("seeds") {
		if strings.HasPrefix(w.ID, "S001-") {
			s001 = append(s001, w)
		}
	}
	if len(s001) > 0 {
		slices.SortStableFunc(s001, func(a, b *Workload) int { return cmp.Compare(width(a), width(b)) })
		w := s001[0]
		title := fmt.Sprintf("S001: %s %s, square kernels of width %d to %d", dims(w.Shape), dtypes(w), width(w), width(s001[len(s001)-1]))
		if p, leg, ok := widthChart(rep, title, s001); ok {
			if err := add("seeds", "s001-width.svg", title, p, leg, 8*vg.Inch, 4.5*vg.Inch); err != nil {
				return nil, err
			}
		}
	}

	for _, set := range rep.Sets {
		ws := rep.SetWorkloads(set)
		title := set + ": ndconv's % of roofline"
		if p, ok := rooflineChart(rep, title, ws); ok {
			h := vg.Length(len(ws))*0.2*vg.Inch + 1.2*vg.Inch
			if err := add(set, sanitize(set)+"-roofline.svg", title, p, nil, 7*vg.Inch, h); err != nil {
				return nil, err
			}
		}
	}
	return charts, nil
}

// widthChart plots time against kernel width for ws, one line per column,
// and returns the legend apart, to be drawn beside the plot; false when no
// column timed any of ws.
func widthChart(rep *Report, title string, ws []*Workload) (*plot.Plot, *plot.Legend, bool) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "kernel width"
	p.Y.Label.Text = "median ms (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true

	lo, hi := math.Inf(1), math.Inf(-1)
	for i, c := range rep.Columns {
		var xys plotter.XYs
		for _, w := range ws {
			if ms, ok := rep.Ms(c, w); ok {
				xys = append(xys, plotter.XY{X: float64(width(w)), Y: ms})
				lo, hi = min(lo, ms), max(hi, ms)
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue // a NaN or an infinity: the parser lets none through
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		leg.Add(c.Label, line, points)
	}
	if math.IsInf(lo, 1) {
		return nil, nil, false
	}
	// Pad the log axis by a quarter (a factor 2 for a single value), so
	// that no point sits on the frame.
	pad := 1.25
	if lo == hi {
		pad = 2
	}
	p.Y.Min, p.Y.Max = lo/pad, hi*pad
	// and the width axis by a twentieth of its span.
	x0, x1 := float64(width(ws[0])), float64(width(ws[len(ws)-1]))
	p.X.Min, p.X.Max = x0-(x1-x0)/20-0.5, x1+(x1-x0)/20+0.5
	// A tick at each width, where they are few enough to read.
	var ticks plot.ConstantTicks
	for i, w := range ws {
		if i == 0 || width(w) != width(ws[i-1]) {
			ticks = append(ticks, plot.Tick{Value: float64(width(w)), Label: strconv.Itoa(width(w))})
		}
	}
	if len(ticks) <= 16 {
		p.X.Tick.Marker = ticks
	}
	return p, &leg, true
}

// rooflineChart plots, per workload of ws, the % of roofline of the fastest
// result of the system "ndconv"; false when ndconv timed none of ws.
func rooflineChart(rep *Report, title string, ws []*Workload) (*plot.Plot, bool) {
	vals := make(plotter.Values, len(ws))
	names := make([]string, len(ws))
	found := false
	for i, w := range ws {
		// The first workload at the top: y grows upwards.
		j := len(ws) - 1 - i
		names[j] = w.ID
		best := math.Inf(1)
		for _, c := range rep.Columns {
			if c.System != "ndconv" {
				continue
			}
			ms, ok := rep.Ms(c, w)
			pct, okPct := rep.Pct(c, w)
			if ok && okPct && ms < best {
				best, vals[j], found = ms, pct, true
			}
		}
	}
	if !found {
		return nil, false
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "% of roofline"
	p.Add(plotter.NewGrid())
	bars, err := plotter.NewBarChart(vals, 0.14*vg.Inch)
	if err != nil {
		return nil, false // a NaN or an infinity in a line's own pct_roofline
	}
	bars.Horizontal = true
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalY(names...)
	// The whole scale, so that the headroom shows.
	p.X.Min, p.X.Max = 0, max(100, p.X.Max*1.05)
	return p, true
}

// logTicks marks every m·10^e (m = 1…9) in range, labelling all of them
// over at most one decade, 1, 2 and 5 over at most three, else 1.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi >= lo) {
		return nil
	}
	decades := math.Log10(hi / lo)
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			v := pow10(m, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if decades <= 1 || m == 1 || (decades <= 3 && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// pow10 returns m·10^e, exact where it can be (m/10^-e, not m·0.1…).
func pow10(m, e int) float64 {
	if e < 0 {
		return float64(m) / math.Pow10(-e)
	}
	return float64(m) * math.Pow10(e)
}

// saveSVG draws p on a w×h SVG canvas, with leg (if not nil) to its right,
// and writes it to path. The plot library panics on some inputs (a
// non-positive value on a log axis, which the callers rule out); such a
// panic is returned as an error.
func saveSVG(p *plot.Plot, leg *plot.Legend, w, h vg.Length, path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("draw %s: %v", path, r)
		}
	}()
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	if leg == nil {
		p.Draw(dc)
	} else {
		r := leg.Rectangle(dc)
		margin := 0.15 * vg.Inch
		lw := r.Max.X - r.Min.X + 2*margin
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		leg.Draw(draw.Crop(dc, w-lw+margin, 0, 0, -0.4*vg.Inch))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("draw %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}
