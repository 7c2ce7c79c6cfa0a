package main

import (
	"fmt"
	"os"
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
// it; a profile that cannot start is said once on stderr, and the command
// runs without it.
func profileFromEnv() func() {
	path := os.Getenv("NDCONV_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	stop, err := startCPUProfile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ndconv: NDCONV_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return stop
}

func trace(stage string) {
	if tracing {
		fmt.Fprintf(os.Stderr, "ndconv: trace +%.1f ms %s\n", ms(time.Since(processStart)), stage)
	}
}
