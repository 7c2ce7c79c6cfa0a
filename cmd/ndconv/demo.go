package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/sample"
	"github.com/ndconv/ndconv/nd"
)

// demoStep is one filtering of one embedded sample.
type demoStep struct {
	sample string
	what   string
	// outputs are the files written: the result itself, then pictures of it
	// (a result that is not an image is shown scaled to 0–255).
	output  string
	preview string
	// inputPreview, when set, is a picture of the input to write too.
	inputPreview string
	opt          ndconv.Options
	filters      func(rank int) ([]filters.Filter, error)
	// input prepares the sample (the gray version of the photo).
	input func(nd.Array) nd.Array
}

// named builds named filters for the given number of axes.
func named(n ...filters.Named) func(int) ([]filters.Filter, error) {
	return func(rank int) ([]filters.Filter, error) { return ndconv.BuildFilters(rank, nil, n...) }
}

// sobelMagnitude is the Sobel gradient magnitude, sqrt(sobel₀² + sobel₁²),
// made from the two named Sobel filters' terms.
func sobelMagnitude(rank int) ([]filters.Filter, error) {
	rows, err := ndconv.BuildFilters(rank, nil, filters.Sobel{Axis: 0}, filters.Sobel{Axis: 1})
	if err != nil {
		return nil, err
	}
	return []filters.Filter{{Name: "sobel gradient magnitude", Terms: append(rows[0].Terms, rows[1].Terms...), Combine: filters.Magnitude}}, nil
}

func demoSteps() []demoStep {
	spatial := []int{0, 1} // of the H×W×3 photo
	volumeBank := named(
		filters.Gaussian{Sigma: []float64{1.5}},
		filters.Gaussian{Sigma: []float64{1.5}, Order: []int{1, 0, 0}},
		filters.Gaussian{Sigma: []float64{1.5}, Order: []int{0, 1, 0}},
		filters.Gaussian{Sigma: []float64{1.5}, Order: []int{0, 0, 1}},
	)
	return []demoStep{
		{sample: sample.Astronaut, what: "gaussian sigma 3, each colour channel", output: "astronaut-gaussian.png",
			opt: ndconv.Options{Axes: spatial}, filters: named(filters.Gaussian{Sigma: []float64{3}})},
		{sample: sample.Astronaut, what: "sobel gradient magnitude of the gray photo", output: "astronaut-sobel-magnitude.npy", preview: "astronaut-sobel-magnitude.png",
			opt: ndconv.Options{DType: ndconv.Float32}, filters: sobelMagnitude, input: gray},
		{sample: sample.Astronaut, what: "gabor bank, 8 orientations, 0.1 cycles/pixel", output: "astronaut-gabor-bank.npy", preview: "astronaut-gabor-bank.png",
			opt: ndconv.Options{DType: ndconv.Float32}, input: gray,
			filters: named(filters.GaborBank{Gabor: filters.Gabor{Frequency: 0.1}, Orientations: 8})},
		{sample: sample.Brain, what: "3-D gaussian sigma 1.5, head MRI, header kept", output: "brain-gaussian.nii.gz", preview: "brain-gaussian.png", inputPreview: "brain-input.png",
			opt: ndconv.Options{}, filters: named(filters.Gaussian{Sigma: []float64{1.5}})},
		{sample: sample.Brain, what: "3-D bank: gaussian and its 3 derivatives", output: "brain-bank.npy", preview: "brain-bank.png",
			opt: ndconv.Options{DType: ndconv.Float32}, filters: volumeBank},
		{sample: sample.ECG, what: "1-D gaussian smoothing, sigma 3 samples", output: "ecg-smooth.npy",
			opt: ndconv.Options{Border: ndconv.Nearest}, filters: named(filters.Gaussian{Sigma: []float64{3}})},
	}
}

func newDemoCommand() *cobra.Command {
	var out, device string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Filter the embedded photo, MRI volume and ECG; report what was done and how long it took",
		Long: `Runs named filters on the samples built into ndconv (a photograph, a head MRI
volume and an electrocardiogram; see internal/sample for where they come from
and their licences) and writes the results, with pictures of them, into --out.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("demo output directory: %w", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "ndconv demo: writing into %s%c\n", out, filepath.Separator)
			total := time.Now()
			for _, s := range demoSteps() {
				if err := runDemoStep(cmd, w, s, out, device, quiet); err != nil {
					return fmt.Errorf("demo %s: %w", s.what, err)
				}
			}
			fmt.Fprintf(w, "done in %.2f s\n", time.Since(total).Seconds())
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "ndconv-demo", "directory for the outputs")
	cmd.Flags().StringVar(&device, "device", "auto", "auto|cpu|cuda|cuda:N|opencl|opencl:P:D")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

func runDemoStep(cmd *cobra.Command, w io.Writer, s demoStep, out, device string, quiet bool) error {
	in, meta, err := sample.Load(s.sample)
	if err != nil {
		return err
	}
	if s.input != nil {
		in = s.input(in)
	}
	rank := len(in.Shape)
	if len(s.opt.Axes) > 0 {
		rank = len(s.opt.Axes)
	}
	fs, err := s.filters(rank)
	if err != nil {
		return err
	}
	s.opt.Device = device
	progress := newProgress(cmd.ErrOrStderr(), s.what, quiet)
	s.opt.Progress = progress.reporter()
	start := time.Now()
	res, err := ndconv.ApplyFilters(cmd.Context(), ndconv.Correlation, in, s.opt, fs...)
	progress.finish()
	if err != nil {
		return err
	}
	took := time.Since(start)
	if err := imageio.WriteFile(filepath.Join(out, s.output), res, imageio.WriteOptions{Meta: meta}); err != nil {
		return err
	}
	written := s.output
	if s.inputPreview != "" {
		if err := imageio.WriteFile(filepath.Join(out, s.inputPreview), preview(in, 1), imageio.WriteOptions{}); err != nil {
			return err
		}
		written += ", " + s.inputPreview
	}
	if s.preview != "" {
		if err := imageio.WriteFile(filepath.Join(out, s.preview), preview(res, len(fs)), imageio.WriteOptions{}); err != nil {
			return err
		}
		written += ", " + s.preview
	}
	fmt.Fprintf(w, "  %-13s %-7v %-12s %-52s %7.1f ms  -> %s (%v %v)\n",
		s.sample, in.DType(), fmt.Sprint(in.Shape), s.what, ms(took), written, res.DType(), res.Shape)
	return nil
}

// gray returns the luma (ITU-R BT.601) of an H×W×3 uint8 photo as float32.
func gray(rgb nd.Array) nd.Array {
	h, w := rgb.Shape[0], rgb.Shape[1]
	v := rgb.Float64s()
	out := make([]float32, h*w)
	for i := range out {
		out[i] = float32(0.299*v[3*i] + 0.587*v[3*i+1] + 0.114*v[3*i+2])
	}
	return nd.Array{Shape: []int{h, w}, Data: out}
}

// preview returns a picture of a result for people: a 2-D result as it is,
// a volume by its middle slice along the last axis (shown with axis 1 down,
// axis 0 across, as radiologists view a nibabel volume's slice), and a bank
// of k results as a grid of panels, at most 4 across; values scaled so that
// each panel spans 0–255 (signed results with zero at mid-gray).
func preview(a nd.Array, k int) nd.Array {
	shape := a.Shape
	if k > 1 {
		shape = shape[:len(shape)-1]
	}
	h, w, depth := shape[0], shape[1], 1
	volume := len(shape) == 3
	if volume {
		depth = shape[2]
	}
	v := a.Float64s()
	at := func(y, x, panel int) float64 { return v[((y*w+x)*depth+depth/2)*k+panel] }
	ph, pw := h, w // panel size
	if volume {
		ph, pw = w, h
		plain := at
		at = func(y, x, panel int) float64 { return plain(x, w-1-y, panel) }
	}
	across := min(k, 4)
	down := (k + across - 1) / across
	width := pw * across
	out := make([]uint8, ph*down*width)
	for p := range k {
		lo, hi := math.Inf(1), math.Inf(-1)
		for y := range ph {
			for x := range pw {
				lo, hi = min(lo, at(y, x, p)), max(hi, at(y, x, p))
			}
		}
		scale, offset := 255/max(hi-lo, 1e-12), lo
		if lo < 0 && hi > 0 {
			m := max(-lo, hi)
			scale, offset = 127.5/m, -m
		}
		y0, x0 := p/across*ph, p%across*pw
		for y := range ph {
			for x := range pw {
				out[(y0+y)*width+x0+x] = uint8(math.Round((at(y, x, p) - offset) * scale))
			}
		}
	}
	return nd.Array{Shape: []int{ph * down, width}, Data: out}
}
