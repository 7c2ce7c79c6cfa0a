package gpu

import (
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// TapsBytes returns a launch's weights in its accumulation type, as bytes:
// float64 where l.Wide (ACC_T is double), else rounded to float32.
func TapsBytes(l *kernels.Launch) []byte {
	if l.Wide {
		return nd.AsBytes(l.Taps)
	}
	w := make([]float32, len(l.Taps))
	for i, v := range l.Taps {
		w[i] = float32(v)
	}
	return nd.AsBytes(w)
}

// LaunchArgs are the arguments every kernel family takes, in order: the
// input and output buffers, the taps (a buffer, or TapsBytes by value where
// l.TapsInParams), the outer-axis table, l.Scalars (int64: long) and l.CVal
// in the accumulation type (float64 where l.Wide, else float32).
func LaunchArgs(l *kernels.Launch, in, out, taps, outer any) []any {
	args := make([]any, 0, 5+len(l.Scalars))
	args = append(args, in, out, taps, outer)
	for _, v := range l.Scalars {
		args = append(args, v)
	}
	if l.Wide {
		return append(args, l.CVal)
	}
	return append(args, float32(l.CVal))
}
