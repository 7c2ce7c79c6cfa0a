// Command ndconv convolves and correlates signals, images, volumes and N-D
// arrays with scipy.ndimage's semantics. Run `ndconv help` for usage.
//
// Exit status: 0 on success, 2 on a usage error (unknown flag or value,
// wrong number of arguments), 1 on any other failure; errors are one line on
// stderr, and no output file is left behind on failure. An internal panic
// (a bug) is such a line too, "internal error: panic: …", exit status 1,
// with its temporary files removed: every goroutine the command starts
// recovers its own panics (the CPU engine's workers return theirs as
// errors); NDCONV_DEBUG=1 prints the stack after the line.
//
// Commands: correlate and convolve (the filter itself), devices (what can
// run), version, demo (the embedded samples), and plan, worker and status
// (a Zarr job run by an array job's workers, package job: plan.go,
// worker.go). main.go maps errors to
// exit statuses; filter.go parses the filter flags into a job and runs it;
// kernel.go reads kernel files.
package main
