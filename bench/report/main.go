// Command report owns the presentation of ndconv's benchmark results: it
// joins the JSON lines of `ndconv bench` and of the peers (workload, result,
// roofline and meta lines, as bench/README.md defines them) into results.md,
// one Markdown table per workload set, and SVG charts beside it.
//
// Usage:
//
//	go run ./bench/report -o DIR FILE.jsonl [FILE.jsonl ...]
//
// It computes what the lines leave out (a peer's % of roofline, from the
// workload's bytes and madds and the roofline of the result's device), the
// speed of ndconv against its best peer, and flags every result whose
// checksum differs from ndconv's. Malformed lines are reported on standard
// error as file:line and listed at the end of results.md; lines of an
// unknown kind are ignored. The same input gives byte-identical output.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// run is the command with its arguments; problems in the input that do not
// stop it are written to stderr.
func run(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("report", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("o", "", "output `directory` (created if missing)")
	date := fl.String("date", "", "date shown in results.md (default: the dates of the meta lines, else today)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: report -o DIR FILE.jsonl [FILE.jsonl ...]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fl.NArg() == 0 {
		fl.Usage()
		return errors.New("need -o DIR and at least one input file")
	}

	in := &Input{}
	for _, name := range fl.Args() {
		if err := readFile(in, name); err != nil {
			return err
		}
	}
	for _, p := range in.Problems {
		fmt.Fprintln(stderr, "report: malformed line", p)
	}
	rep := join(in)
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "report:", w)
	}

	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	charts, err := writeCharts(*dir, rep)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(*dir, "results.md"))
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, rep, reportDate(*date, in.Metas), charts); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return f.Close()
}

// readFile reads the lines of the file name into in.
func readFile(in *Input, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return in.read(name, f)
}

// reportDate is flag if set, else the distinct dates of the meta lines,
// else today's date.
func reportDate(flag string, metas []Meta) string {
	if flag != "" {
		return flag
	}
	var dates []string
	for _, m := range metas {
		if m.Date != "" && !slices.Contains(dates, m.Date) {
			dates = append(dates, m.Date)
		}
	}
	if len(dates) == 0 {
		return time.Now().Format(time.DateOnly)
	}
	slices.Sort(dates)
	return strings.Join(dates, ", ")
}
