package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv/nd"
)

// usageError marks an error in how ndconv was invoked (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

func main() {
	stopProfile := profileFromEnv()
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, runFilter)
	stop()
	stopProfile()
	trace("exit")
	os.Exit(code)
}

// stoppedError is the cause of a context cancelled by a signal.
type stoppedError struct{ sig os.Signal }

func (e *stoppedError) Error() string { return "stopped by " + e.sig.String() }

// signalContext returns a context that SIGINT or SIGTERM cancels with a
// *stoppedError, so that reading, computing and writing all stop and leave
// no output. A second signal has its default effect (a user's forced kill).
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&stoppedError{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// run executes the command line args and returns the exit status.
// runJob carries out convolve and correlate; tests of the argument parsing
// replace it. Every failure is one line on stderr, an internal panic
// included (exit status 1): the goroutines ndconv starts recover their own
// panics into errors, and one that reaches here is reported after the
// deferred clean-ups on its way (temporary files) have run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, runJob func(*cobra.Command, filterJob) error) (code int) {
	defer func() {
		if r := recover(); r != nil {
			code = report(stderr, &nd.PanicError{Value: r, Stack: debug.Stack()})
		}
	}()
	root := newRootCommand(stdout, stderr, runJob)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var stopped *stoppedError
	if errors.As(context.Cause(ctx), &stopped) {
		// Whatever the interrupted stage reported, the reason is the signal;
		// exit as a shell reports a process a signal ended (128 + number).
		fmt.Fprintln(stderr, "ndconv:", stopped)
		if n, ok := stopped.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
		return 1
	}
	return report(stderr, err)
}

// report writes err as one line on stderr and returns the exit status: 2
// for a usage error, 1 otherwise. A panic (an *nd.PanicError, recovered
// here or by a library's worker) is a bug: the line says so, and with
// NDCONV_DEBUG set the stack follows it.
func report(stderr io.Writer, err error) int {
	msg := err.Error()
	var panicked *nd.PanicError
	isPanic := errors.As(err, &panicked)
	if isPanic {
		msg += " (a bug in ndconv: please report it; NDCONV_DEBUG=1 prints the stack)"
	}
	fmt.Fprintln(stderr, "ndconv:", oneLine.Replace(msg))
	if isPanic && os.Getenv("NDCONV_DEBUG") != "" {
		stderr.Write(panicked.Stack)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// oneLine keeps a message that holds line breaks (a panic's value) on one
// line.
var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

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
		newTuneCommand(),
		newPlanCommand(),
		newWorkerCommand(),
		newStatusCommand(),
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
