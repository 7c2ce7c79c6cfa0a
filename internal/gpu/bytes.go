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
