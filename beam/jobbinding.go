// The binding to ndconv's job package: the plan format "ndconv".

package beam

import (
	"context"

	"github.com/ndconv/ndconv/job"
)

func init() {
	Register(JobFormat, Format{
		Load: func(ctx context.Context, url string) ([]byte, error) {
			s, err := job.Load(ctx, url)
			if err != nil {
				return nil, err
			}
			return s.Marshal()
		},
		Parse: func(plan []byte) (Job, error) {
			s, err := job.Parse(plan)
			if err != nil {
				return nil, err
			}
			return jobSpec{s}, nil
		},
	})
}

// jobSpec is a *job.Spec as a Job: its Open returns the concrete
// *job.Runner, and Status is a function of the package.
type jobSpec struct{ *job.Spec }

func (s jobSpec) Open(ctx context.Context) (Runner, error) {
	r, err := s.Spec.Open(ctx)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s jobSpec) Status(ctx context.Context) (done, total int, err error) {
	return job.Status(ctx, s.Spec)
}
