package zarr

import (
	"slices"
	"testing"
)

// TestWithChannelFirst: a channel axis before the spatial ones, with a
// scale of 1 and a translation of 0 where transformations are given, and
// ms itself left as it was; refused where ms has a channel or time axis.
func TestWithChannelFirst(t *testing.T) {
	space := []Axis{{Name: "y", Type: "space", Unit: "micrometer"}, {Name: "x", Type: "space", Unit: "micrometer"}}
	ms := Multiscale{Version: "0.4", Axes: space, Datasets: []Dataset{{Path: "2", Scale: []float64{4, 4}}}, Translation: []float64{1.5, 2.5}}
	got, ok := ms.WithChannelFirst()
	if !ok || len(got.Axes) != 3 || got.Axes[0] != (Axis{Name: "c", Type: "channel"}) || got.Axes[2] != space[1] ||
		!slices.Equal(got.Datasets[0].Scale, []float64{1, 4, 4}) || got.Datasets[0].Translation != nil || got.Datasets[0].Path != "2" ||
		!slices.Equal(got.Translation, []float64{0, 1.5, 2.5}) || got.Scale != nil {
		t.Fatalf("with a channel first: %+v, %v", got, ok)
	}
	if len(ms.Axes) != 2 || !slices.Equal(ms.Datasets[0].Scale, []float64{4, 4}) {
		t.Errorf("the original changed: %+v", ms)
	}
	for _, first := range []Axis{{Name: "c", Type: "channel"}, {Name: "t", Type: "time"}} {
		withAxis := ms
		withAxis.Axes = append([]Axis{first}, space...)
		if _, ok := withAxis.WithChannelFirst(); ok {
			t.Errorf("axes %v took a second channel axis", withAxis.Axes)
		}
	}
}
