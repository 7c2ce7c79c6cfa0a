package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// usageError marks an error in how ndconv was invoked (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, runFilter)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status.
// runJob carries out convolve and correlate; tests of the argument parsing
// replace it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, runJob func(*cobra.Command, filterJob) error) int {
	root := newRootCommand(stdout, stderr, runJob)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "ndconv:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func newRootCommand(stdout, stderr io.Writer, runJob func(*cobra.Command, filterJob) error) *cobra.Command {
	root := &cobra.Command{
		Use:   "ndconv",
		Short: "Convolve and correlate signals, images, volumes and N-D arrays",
		Long: `ndconv convolves and correlates signals, images, volumes and N-D arrays with
scipy.ndimage's exact semantics: every border mode, origins, same/valid/full
output, filter banks, per-channel filtering, integer and float data.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(
		newFilterCommand("correlate", "scipy.ndimage.correlate; OpenCV filter2D", runJob),
		newFilterCommand("convolve", "scipy.ndimage.convolve", runJob),
		newDevicesCommand(),
		newVersionCommand(),
		newDemoCommand(),
		newBenchCommand(),
	)
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return root
}

// wrapArgs makes argument-count errors usage errors.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		check = cobra.NoArgs
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{fmt.Errorf("%s: %w", cmd.Name(), err)}
		}
		return nil
	}
}
