// Package beam runs an ndconv block job as an Apache Beam pipeline (Go
// SDK): on Dataflow, Flink, Spark or the in-process Prism runner. Beam only
// decides where each block index runs; the block itself is ndconv's block
// function, a pure function of (plan, index) whose writes are idempotent,
// so a bundle retried by the runner, or the whole pipeline run again,
// writes the same bytes and loses nothing.
//
// The pipeline is
//
//	Impulse → create the output once, emit 0..N-1 → Reshuffle → run block i → sum
//
// The Reshuffle spreads the indices, emitted by one worker, over all of
// them. Each worker opens the plan once (a DoFn's Setup) and closes it in
// Teardown.
//
// The DoFns carry the plan's bytes, not its URL: a worker runs exactly
// the plan the launcher read. A plan format (ndconv's job package, or a
// test's fake) is registered by name with Register; the DoFns find it by
// that name, so the same binary must run as launcher and worker (Beam's Go
// SDK requires that anyway).
//
// This is a Go module of its own (beam/go.mod) so that the library does
// not carry Beam's dependencies. README.md gives the runner flags.
package beam
