package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// Many inputs in one call (--out-dir): each file is read, filtered and
// written by filterArray, exactly as a one-file call does it, one file after
// another (no pipeline yet). The device is opened once for the run and one
// plan is kept per distinct input shape, dtype and channel count, so a
// folder of like files plans (and compiles GPU kernels) once.

// manyInput is one input of a many-file run and where its output goes.
type manyInput struct {
	path   string // as found: the argument, or joined under it
	dir    string // the directory under the argument's directory ("" for a file argument)
	output string
}

// outNameFields are the fields an --out-name template may hold.
var outNameFields = []string{"{stem}", "{ext}", "{name}", "{dir}", "{i}"}

// checkOutName refuses a template with an unknown field or none at all.
func checkOutName(tmpl string) error {
	rest := tmpl
	for _, f := range outNameFields {
		rest = strings.ReplaceAll(rest, f, "")
	}
	if strings.ContainsAny(rest, "{}") {
		return usagef("--out-name %q: the fields are %s", tmpl, strings.Join(outNameFields, " "))
	}
	if strings.TrimSpace(tmpl) == "" {
		return usagef("--out-name is empty")
	}
	return nil
}

// splitExt splits a file name into stem and extension (with its dot),
// taking .nii.gz whole.
func splitExt(name string) (stem, ext string) {
	if strings.HasSuffix(strings.ToLower(name), ".nii.gz") && len(name) > len(".nii.gz") {
		return name[:len(name)-len(".nii.gz")], name[len(name)-len(".nii.gz"):]
	}
	ext = filepath.Ext(name)
	return strings.TrimSuffix(name, ext), ext
}

// outputName expands the template for input i. A template without {dir}
// is placed under the input's relative directory, so that --recursive keeps
// the tree.
func outputName(tmpl, outDir string, i int, in manyInput) string {
	name := filepath.Base(in.path)
	stem, ext := splitExt(name)
	dir := filepath.ToSlash(in.dir)
	s := strings.NewReplacer("{stem}", stem, "{ext}", ext, "{name}", name, "{dir}", dir, "{i}", strconv.Itoa(i)).Replace(tmpl)
	if !strings.Contains(tmpl, "{dir}") {
		s = filepath.Join(in.dir, s)
	}
	return filepath.Join(outDir, filepath.FromSlash(s))
}

// knownFormat reports whether path's extension names a format ndconv reads
// and writes.
func knownFormat(path string) bool { return imageio.CheckDType(path, nd.Uint8) == nil }

// collectInputs expands the arguments: a file is taken as it is (a missing
// one fails when it is read, as one file in the run); a directory gives its
// entries with a known extension, in name order, that are not directories
// (a dangling link is taken and fails when read), and with recursive those
// of its subdirectories, the output directory's tree excepted. Symbolic
// links to directories are not followed.
func collectInputs(args []string, recursive bool, outDir string) ([]manyInput, error) {
	absOut, _ := filepath.Abs(outDir)
	var ins []manyInput
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil && strings.ContainsAny(arg, "*?[") {
			// A pattern the shell did not expand (quoted, or too many
			// files for one command line).
			matches, err := filepath.Glob(arg)
			if err != nil {
				return nil, usagef("%s: %v", arg, err)
			}
			if len(matches) == 0 {
				return nil, usagef("%s: no file matches", arg)
			}
			for _, m := range matches {
				if fi, err := os.Stat(m); (err != nil || !fi.IsDir()) && knownFormat(m) {
					ins = append(ins, manyInput{path: m})
				}
			}
			continue
		}
		if err != nil || !fi.IsDir() {
			if !knownFormat(arg) {
				return nil, usagef("%s: not a file format ndconv reads (by its extension)", arg)
			}
			ins = append(ins, manyInput{path: arg})
			continue
		}
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path == arg {
					return nil
				}
				if abs, _ := filepath.Abs(path); !recursive || abs == absOut {
					return filepath.SkipDir
				}
				return nil
			}
			if !knownFormat(path) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(path); err == nil && fi.IsDir() {
					return nil
				}
			}
			rel, err := filepath.Rel(arg, filepath.Dir(path))
			if err != nil || rel == "." {
				rel = ""
			}
			ins = append(ins, manyInput{path: path, dir: rel})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("input directory %s: %w", arg, err)
		}
	}
	return ins, nil
}

// runMany carries out a job of many inputs (--out-dir).
func runMany(cmd *cobra.Command, job filterJob) error {
	specs, err := parseSpecs(job)
	if err != nil {
		return err
	}
	args := job.inputs
	if job.from != "" {
		listed, err := readInputList(cmd, job.from)
		if err != nil {
			return err
		}
		args = append(slices.Clip(args), listed...)
	}
	ins, err := collectInputs(args, job.recursive, job.outDir)
	if err != nil {
		return err
	}
	if len(ins) == 0 {
		return usagef("no input files in %s", strings.Join(args, " "))
	}
	// Refuse, before any work, names that clash or overwrite an input, and
	// an output format not known.
	byOutput := map[string]string{}
	anyRaw := false
	for i := range ins {
		in := &ins[i]
		in.output = outputName(job.outName, job.outDir, i, *in)
		if !knownFormat(in.output) {
			return usagef("--out-name %q: output %s has no known format extension", job.outName, in.output)
		}
		absOut, _ := filepath.Abs(in.output)
		absIn, _ := filepath.Abs(in.path)
		if absOut == absIn {
			return usagef("%s: the output would overwrite its input; choose another --out-dir or --out-name", in.path)
		}
		if prev, ok := byOutput[absOut]; ok {
			return usagef("%s and %s would both be written to %s; use {dir} or {i} in --out-name", prev, in.path, in.output)
		}
		byOutput[absOut] = in.path
		anyRaw = anyRaw || strings.EqualFold(filepath.Ext(in.path), ".raw")
	}
	if job.rawFlags && !anyRaw {
		return usagef("--shape and --input-dtype are for .raw inputs, and none is given")
	}
	// The device is opened once, while the first file is read, and held
	// for the run, as a one-file call holds it.
	prewarm(job.opt.Device, ins[0].path)
	ctx := cmd.Context()
	start := time.Now()
	plans := map[string]*ndconv.FilterPlan{}
	failed, skipped := 0, 0
	stderr := cmd.ErrOrStderr()
	for _, in := range ins {
		if ctx.Err() != nil {
			break
		}
		if job.skipExisting {
			if _, err := os.Lstat(in.output); err == nil {
				skipped++
				continue
			}
		}
		if err := filterOne(cmd, job, specs, in, plans); err != nil {
			if ctx.Err() != nil {
				break // the signal's line is run's to print
			}
			failed++
			msg := err.Error()
			if !strings.Contains(msg, in.path) {
				msg = in.path + ": " + msg
			}
			fmt.Fprintln(stderr, "ndconv:", oneLine.Replace(msg))
			if job.failFast {
				break
			}
		}
	}
	for _, p := range plans {
		p.Close()
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	secs := time.Since(start).Seconds()
	if !job.quiet {
		done := len(ins) - failed - skipped
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %d files, %d failed, %d skipped, %.2f s, %.1f files/s\n",
			job.op, len(ins), failed, skipped, secs, float64(done)/max(secs, 1e-9))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files failed", failed, len(ins))
	}
	return nil
}

// filterOne filters one input of a many-file run into its output, as a
// one-file call would, with a plan from plans (made there when new).
func filterOne(cmd *cobra.Command, job filterJob, specs []kernelSpec, in manyInput, plans map[string]*ndconv.FilterPlan) error {
	job.input, job.output, job.quiet = in.path, in.output, true
	if err := os.MkdirAll(filepath.Dir(in.output), 0o755); err != nil {
		return err
	}
	if err := imageio.CheckWritable(in.output); err != nil {
		return err
	}
	if streamable(job) {
		if done, err := runStreamed(cmd, job, specs); done {
			return err
		}
	}
	ctx := cmd.Context()
	src, meta, err := readInput(ctx, in.path, job.raw)
	if err != nil {
		return err
	}
	key := fmt.Sprint(src.Shape, src.DType(), meta.Channels)
	_, err = filterArray(ctx, job, specs, src, meta, nil, func(opt ndconv.Options, fs []filters.Filter) (*ndconv.FilterPlan, error) {
		if p := plans[key]; p != nil {
			return p, nil
		}
		testHookNote("plan " + key) // the tests count the plans made
		p, err := ndconv.NewFilterPlan(job.op, src.Shape, src.DType(), opt, fs...)
		if err == nil {
			plans[key] = p
		}
		return p, err
	})
	return err
}

// readInputList reads --from's list of inputs, one path a line (blank lines
// skipped), from a file or, for "-", standard input.
func readInputList(cmd *cobra.Command, from string) ([]string, error) {
	var r io.Reader = cmd.InOrStdin()
	if from != "-" {
		f, err := os.Open(from)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		defer f.Close()
		r = f
	}
	var paths []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); strings.TrimSpace(line) != "" {
			paths = append(paths, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	return paths, nil
}
