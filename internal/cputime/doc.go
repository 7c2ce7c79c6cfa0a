// Package cputime is test support: the CPU time a process has used, which
// the CPU engine's benchmarks report beside wall time. On a shared
// machine the wall time of a benchmark depends on the other load; the CPU
// time it took is the steadier measure of the work.
package cputime
