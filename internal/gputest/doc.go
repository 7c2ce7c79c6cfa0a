// Package gputest holds what the GPU backends' tests (cuda, opencl) share,
// beyond the case table and reference of internal/enginetest: the one
// device a package's tests share (Shared), goroutines released at the
// same moment (Together), an engine run on one case (Run) or on many cases
// from several goroutines (Spread), the pipelines' checks (PipelineCases,
// CheckPipelined, CheckTimeline, CheckCancel), and the workloads the
// engines' timing tests time (TimingWorkloads). It is imported only by
// tests.
package gputest
