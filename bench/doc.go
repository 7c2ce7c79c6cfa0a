// Package bench is the instrument every speed figure of ndconv is measured
// with: the named workload sets (the seeds' and the anchors'), their input
// data and kernels computed by formulas that the peer scripts share
// (bench/README.md), the roofline of the device measured in the same run,
// and the timing of ndconv on data already in place; and the tuner
// (TuneWorkload, TuneRates). It reaches ndconv through the root package
// only (ndconv.NewBenchPlan, ndconv.MeasureRoofline, ndconv.TuningCache).
//
// `ndconv bench` prints its results as JSON lines; bench/peers runs other
// systems on the same workloads, and bench/report joins both into tables and
// charts.
package bench
