package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// writeMarkdown writes results.md: the header, then per workload set its
// table, footnotes and charts.
func writeMarkdown(out io.Writer, rep *Report, date string, charts []Chart) error {
	w := bufio.NewWriter(out)
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }

	p("# ndconv benchmark results\n\n")
	p("- Date: %s\n", date)
	p("- Input: %s\n", strings.Join(rep.In.Files, ", "))
	p("\n## Devices and their roofline\n\n")
	p("| device | copy GB/s | FMA GFLOP/s |\n|---|--:|--:|\n")
	for _, d := range rep.Devices {
		name := d
		rf, ok := rep.Rooflines[d]
		switch {
		case !ok:
			p("| %s | — | — |\n", escape(name))
		case rep.Measured[d] > 1:
			p("| %s | %.0f | %.0f |\n", escape(name+fmt.Sprintf(" (best of %d measurements)", rep.Measured[d])), rf.CopyGBps, rf.FMAGFlops)
		default:
			p("| %s | %.0f | %.0f |\n", escape(name), rf.CopyGBps, rf.FMAGFlops)
		}
	}
	if metas := uniqueMetas(rep.In.Metas); len(metas) > 0 {
		p("\n## Commands\n\n")
		for _, m := range metas {
			var where []string
			if m.Host != "" {
				where = append(where, "on "+m.Host)
			}
			if m.Date != "" {
				where = append(where, m.Date)
			}
			cmd := "(no command)"
			if m.Command != "" {
				cmd = code(m.Command)
			}
			p("- %s", cmd)
			if len(where) > 0 {
				p(" (%s)", strings.Join(where, ", "))
			}
			p("\n")
		}
	}
	p("\nCells: median ms (%% of roofline; floor = max(bytes ÷ copy bandwidth, 2·madds ÷ FMA peak) of the result's device). ")
	p("— : the system cannot run the workload; empty: the system did not report it. ≠ : the checksum differs from ndconv's by more than 1e-3 relative. ")
	p("\"ndconv ÷ best peer\" is the fastest peer's median (on whichever device it ran) over ndconv's: above 1, ndconv is faster.\n")

	for _, set := range rep.Sets {
		p("\n## %s\n\n", set)
		writeTable(w, rep, set)
		for _, c := range charts {
			if c.Set == set {
				p("\n![%s](%s)\n", c.Title, c.File)
			}
		}
	}

	if len(rep.In.Problems)+len(rep.Warnings) > 0 {
		p("\n## Input problems\n\n")
		for _, s := range rep.In.Problems {
			p("- malformed line %s\n", escape(s))
		}
		for _, s := range rep.Warnings {
			p("- %s\n", escape(s))
		}
	}
	return w.Flush()
}

// writeTable writes the table of one set and its footnotes.
func writeTable(w io.Writer, rep *Report, set string) {
	ws := rep.SetWorkloads(set)
	cols := rep.SetColumns(set)
	repeats := false
	for _, wl := range ws {
		repeats = repeats || wl.Rounds > 1 || wl.Transfers
	}

	head := []string{"id", "shape", "dtype", "kernel", "bank", "channels", "separable", "mode/border"}
	align := []string{"---", "---", "---", "---", "--:", "--:", "---", "---"}
	if repeats {
		head = append(head, "rounds")
		align = append(align, "---")
	}
	for _, c := range cols {
		head = append(head, escape(c.Label))
		align = append(align, "--:")
	}
	head = append(head, "ndconv ÷ best peer")
	align = append(align, "--:")
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))

	var notes footnotes
	for _, wl := range ws {
		row := []string{
			escape(wl.ID),
			dims(wl.Shape),
			dtypes(wl),
			dims(wl.Kernel),
			strconv.Itoa(wl.Bank),
			strconv.Itoa(wl.Channels),
			yesNo(wl.Separable),
			escape(modeBorder(wl)),
		}
		if repeats {
			s := strconv.Itoa(wl.Rounds)
			if wl.Transfers {
				s += ", with transfers"
			}
			row = append(row, s)
		}
		refCol, ref, hasRef := rep.RefChecksum(wl)
		for _, c := range cols {
			row = append(row, cell(rep, c, wl, refCol, ref, hasRef, &notes))
		}
		ratio := "—"
		if v, peer, ok := rep.Ratio(wl); ok {
			ratio = fmt.Sprintf("%.2f× (%s)", v, escape(peer.Label))
		}
		row = append(row, ratio)
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if len(notes.texts) > 0 {
		fmt.Fprintln(w)
		for i, t := range notes.texts {
			fmt.Fprintf(w, "%d. %s\n", i+1, escape(t))
		}
	}
}

// cell formats the result of column c for wl: "ms (pct%)", "—" where null,
// empty where the system did not report wl, then its marks and footnotes.
func cell(rep *Report, c Column, wl *Workload, refCol Column, ref float64, hasRef bool, notes *footnotes) string {
	r := rep.Result(c, wl)
	if r == nil {
		return ""
	}
	s := "—"
	if ms, ok := rep.Ms(c, wl); ok {
		s = sig3(ms)
		if pct, ok := rep.Pct(c, wl); ok {
			s += " (" + sig3(pct) + "%)"
		}
		if hasRef && c != refCol && r.Checksum != nil && checksumDiffers(*r.Checksum, ref) {
			s += " ≠" + notes.ref(fmt.Sprintf("checksum differs: %s gives %s for %s, %s gives %s",
				c.Label, fmtChecksum(*r.Checksum), wl.ID, refCol.Label, fmtChecksum(ref)))
		}
	}
	if note := strings.Join(strings.Fields(r.Note), " "); note != "" {
		s += notes.ref(c.Label + ": " + note)
	}
	return s
}

// footnotes numbers distinct texts from 1 in order of first use.
type footnotes struct {
	texts []string
}

// ref returns the mark of text, "[n]".
func (f *footnotes) ref(text string) string {
	for i, t := range f.texts {
		if t == text {
			return fmt.Sprintf("[%d]", i+1)
		}
	}
	f.texts = append(f.texts, text)
	return fmt.Sprintf("[%d]", len(f.texts))
}

// sig3 formats a positive v with three significant digits, without exponent.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	d := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	return strconv.FormatFloat(v, 'f', d, 64)
}

func fmtChecksum(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }

func dims(d []int) string {
	s := make([]string, len(d))
	for i, n := range d {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, "×")
}

func dtypes(w *Workload) string {
	if w.OutDType == "" || w.OutDType == w.DType {
		return w.DType
	}
	return w.DType + "→" + w.OutDType
}

func modeBorder(w *Workload) string {
	if w.Mode == "valid" {
		return w.Mode
	}
	s := w.Mode + "/" + w.Border
	if w.Border == "constant" && w.CVal != 0 {
		s += " " + strconv.FormatFloat(w.CVal, 'g', -1, 64)
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// escape makes s safe inside a Markdown table cell or list item.
func escape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// code formats s as a Markdown code span.
func code(s string) string {
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// uniqueMetas drops repeated meta lines, keeping input order.
func uniqueMetas(ms []Meta) []Meta {
	var out []Meta
	seen := map[Meta]bool{}
	for _, m := range ms {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
