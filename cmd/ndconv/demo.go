package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/sample"
)

// demoStep is one operation of the demo on one embedded sample.
type demoStep struct {
	sample, what, output string
	op                   ndconv.Operation
	opt                  ndconv.Options
	kernels              []ndconv.Kernel
}

func demoSteps() ([]demoStep, error) {
	g2, err := filters.Gaussian1D(2, 4)
	if err != nil {
		return nil, err
	}
	g3, err := filters.Gaussian1D(3, 4)
	if err != nil {
		return nil, err
	}
	sobelRows := ndconv.NewKernel([]int{3, 3}, []float64{-1, -2, -1, 0, 0, 0, 1, 2, 1})
	sobelCols := ndconv.NewKernel([]int{3, 3}, []float64{-1, 0, 1, -2, 0, 2, -1, 0, 1})
	return []demoStep{
		{sample: sample.Astronaut, what: "gaussian blur, sigma 2 (separable 17x17)", output: "astronaut-gaussian.png",
			opt: ndconv.Options{}, kernels: []ndconv.Kernel{ndconv.SeparableKernel(g2, g2)}},
		{sample: sample.Astronaut, what: "sobel bank (d/drow, d/dcol) into float32", output: "astronaut-sobel-bank.npy",
			opt: ndconv.Options{DType: ndconv.Float32}, kernels: []ndconv.Kernel{sobelRows, sobelCols}},
		{sample: sample.ECG, what: "1-D gaussian smoothing, sigma 3 samples", output: "ecg-smooth.npy",
			opt: ndconv.Options{Border: ndconv.Nearest}, kernels: []ndconv.Kernel{ndconv.SeparableKernel(g3)}},
	}, nil
}

func newDemoCommand() *cobra.Command {
	var out, device string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Filter the embedded samples and report what was done and how long it took",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("demo output directory: %w", err)
			}
			steps, err := demoSteps()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "ndconv demo: writing into %s/\n", out)
			for _, s := range steps {
				in, err := sample.Load(s.sample)
				if err != nil {
					return err
				}
				s.opt.Device = device
				p, err := ndconv.NewPlan(s.op, in.Shape, in.DType(), s.opt, s.kernels...)
				if err != nil {
					return fmt.Errorf("%s: %w", s.what, err)
				}
				start := time.Now()
				res, err := p.Execute(cmd.Context(), ndconv.Array{}, in)
				if err != nil {
					return fmt.Errorf("%s: %w", s.what, err)
				}
				took := time.Since(start)
				path := filepath.Join(out, s.output)
				if err := imageio.WriteFile(path, res, imageio.WriteOptions{}); err != nil {
					return err
				}
				fmt.Fprintf(w, "  %-7s %v %-12v %-60s -> %-22s %v %v  %s on %s  %7.2f ms\n",
					s.sample, in.DType(), fmt.Sprint(in.Shape), s.what, s.output, res.DType(), res.Shape, p.Method(), p.Device(), ms(took))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "ndconv-demo", "directory for the outputs")
	cmd.Flags().StringVar(&device, "device", "auto", "auto|cpu|cuda|cuda:N|opencl|opencl:P:D")
	return cmd
}
