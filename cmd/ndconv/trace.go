package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	rtrace "runtime/trace"
	"time"
)

// With NDCONV_TRACE set, trace prints each stage of a filter job on stderr
// with the time since the process started ("ndconv: trace +12.3 ms
// read"): where a call's wall time goes. The last line ("exit") against
// the wall the shell measures is what the process's end costs (a GPU
// context's teardown).
var (
	processStart = time.Now()
	tracing      = os.Getenv("NDCONV_TRACE") != ""
)

// profileFromEnv starts the CPU profile NDCONV_CPUPROFILE names (any
// command; worker has its --cpuprofile flag too) and returns what stops
// it; NDCONV_EXECTRACE records an execution trace, and with
// NDCONV_MEMPROFILE it writes the allocation profile there when the
// command ends (`go tool pprof -sample_index=alloc_space`: where
// the collector's work comes from). A profile that cannot start or be
// written is said once on stderr, and the command runs without it.
func profileFromEnv() func() {
	var stops []func()
	for _, p := range []struct {
		env   string
		start func(string) (func(), error)
	}{{"NDCONV_CPUPROFILE", startCPUProfile}, {"NDCONV_EXECTRACE", startExecTrace}} {
		path := os.Getenv(p.env)
		if path == "" {
			continue
		}
		stop, err := p.start(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ndconv: %s: %v\n", p.env, err)
			continue
		}
		stops = append(stops, stop)
	}
	memPath := os.Getenv("NDCONV_MEMPROFILE")
	return func() {
		for _, stop := range stops {
			stop()
		}
		if memPath == "" {
			return
		}
		if err := writeAllocProfile(memPath); err != nil {
			fmt.Fprintf(os.Stderr, "ndconv: NDCONV_MEMPROFILE: %v\n", err)
		}
	}
}

// startExecTrace starts the execution tracer (runtime/trace) writing to
// path: where goroutines wait (`go tool trace -pprof=sync|syscall|sched`).
func startExecTrace(path string) (func(), error) {
	return startRecording(path, rtrace.Start, rtrace.Stop)
}

// startRecording creates path, starts a recorder writing to it and
// returns what stops the recorder and closes the file.
func startRecording(path string, start func(io.Writer) error, stop func()) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { stop(); f.Close() }, nil
}

// writeAllocProfile writes the heap profile (allocations since the start,
// sampled) to path.
func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func trace(stage string) {
	if tracing {
		fmt.Fprintf(os.Stderr, "ndconv: trace +%.1f ms %s\n", ms(time.Since(processStart)), stage)
	}
}
