package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
)

// Axis is an OME-Zarr axis: its name ("z", "y", "x", "c", "t"), type
// ("space", "channel", "time") and unit ("micrometer"), each possibly "".
type Axis struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
	Unit string `json:"unit,omitempty"`
}

// Dataset is one level of an OME-Zarr multiscale: the array's path in the
// group and its coordinate transformations (nil where not given).
type Dataset struct {
	Path        string
	Scale       []float64
	Translation []float64
}

// Multiscale is an OME-Zarr (0.4 or 0.5) multiscale image: axes and
// levels, finest first.
type Multiscale struct {
	Version  string // "0.4", "0.5", …
	Name     string
	Axes     []Axis
	Datasets []Dataset
	// Scale and Translation are the multiscale's own transformations,
	// applied after each dataset's (nil where not given).
	Scale, Translation []float64
}

type omeTransform struct {
	Type        string    `json:"type"`
	Scale       []float64 `json:"scale,omitempty"`
	Translation []float64 `json:"translation,omitempty"`
}

type omeDataset struct {
	Path                      string         `json:"path"`
	CoordinateTransformations []omeTransform `json:"coordinateTransformations,omitempty"`
}

type omeMultiscale struct {
	Version                   string            `json:"version,omitempty"`
	Name                      string            `json:"name,omitempty"`
	Axes                      []json.RawMessage `json:"axes"`
	Datasets                  []omeDataset      `json:"datasets"`
	CoordinateTransformations []omeTransform    `json:"coordinateTransformations,omitempty"`
}

// transforms reads scale and translation from a list of transformations.
func transforms(ts []omeTransform) (scale, translation []float64) {
	for _, t := range ts {
		switch t.Type {
		case "scale":
			scale = t.Scale
		case "translation":
			translation = t.Translation
		}
	}
	return scale, translation
}

// parseMultiscales reads the multiscales of a group's attributes: 0.5's
// "ome" object or 0.4's (and earlier) "multiscales" list. None is no
// error.
func parseMultiscales(key string, attrs map[string]json.RawMessage) ([]Multiscale, error) {
	raw, version := attrs["multiscales"], ""
	if ome, ok := attrs["ome"]; ok {
		var o struct {
			Version     string          `json:"version"`
			Multiscales json.RawMessage `json:"multiscales"`
		}
		if err := json.Unmarshal(ome, &o); err != nil {
			return nil, formatErrorf(key, err, "attributes.ome")
		}
		raw, version = o.Multiscales, o.Version
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var ms []omeMultiscale
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, formatErrorf(key, err, "OME-Zarr multiscales")
	}
	out := make([]Multiscale, len(ms))
	for i, m := range ms {
		o := Multiscale{Version: m.Version, Name: m.Name}
		if o.Version == "" {
			o.Version = version
		}
		for _, a := range m.Axes {
			var ax Axis
			if json.Unmarshal(a, &ax.Name) != nil {
				// Before 0.4 an axis was its name alone.
				if err := json.Unmarshal(a, &ax); err != nil {
					return nil, formatErrorf(key, err, "OME-Zarr axis %s", a)
				}
			}
			o.Axes = append(o.Axes, ax)
		}
		for _, d := range m.Datasets {
			if d.Path == "" || path.IsAbs(d.Path) || path.Clean(d.Path) != d.Path || d.Path == ".." || len(d.Path) > 2 && d.Path[:3] == "../" {
				return nil, formatErrorf(key, nil, "OME-Zarr dataset path %q", d.Path)
			}
			sc, tr := transforms(d.CoordinateTransformations)
			o.Datasets = append(o.Datasets, Dataset{Path: d.Path, Scale: sc, Translation: tr})
		}
		o.Scale, o.Translation = transforms(m.CoordinateTransformations)
		out[i] = o
	}
	return out, nil
}

// ReadMultiscales reads the OME-Zarr multiscales of the group at group
// in s (nil when it has none).
func ReadMultiscales(ctx context.Context, s Store, group string) ([]Multiscale, error) {
	group = cleanPath(group)
	n, err := readNode(ctx, s, group)
	if err != nil {
		return nil, err
	}
	return parseMultiscales(join(group, n.metaName), n.attrs)
}

// LevelOf finds the OME-Zarr level an array belongs to: the multiscale of
// the group above arrayPath that lists it, with only that dataset kept.
// ok is false where the array is no such level.
func LevelOf(ctx context.Context, s Store, arrayPath string) (ms Multiscale, ok bool, err error) {
	arrayPath = cleanPath(arrayPath)
	if arrayPath == "" {
		return Multiscale{}, false, nil
	}
	group, name := path.Split(arrayPath)
	all, err := ReadMultiscales(ctx, s, cleanPath(group))
	if errors.Is(err, ErrNotFound) {
		return Multiscale{}, false, nil
	}
	if err != nil {
		return Multiscale{}, false, err
	}
	for _, m := range all {
		for _, d := range m.Datasets {
			if d.Path == name {
				m.Datasets = []Dataset{d}
				return m, true, nil
			}
		}
	}
	return Multiscale{}, false, nil
}

// WriteMultiscale writes the group at group in s with ms as its
// OME-Zarr metadata: version 0.5 (attributes.ome) for format 3, 0.4
// (.zattrs multiscales) for format 2. The group's other attributes are
// replaced.
func WriteMultiscale(ctx context.Context, s Store, group string, format int, ms Multiscale) error {
	group = cleanPath(group)
	for _, d := range ms.Datasets {
		if (d.Scale != nil && len(d.Scale) != len(ms.Axes)) || (d.Translation != nil && len(d.Translation) != len(ms.Axes)) {
			return argErrorf("multiscale", "dataset %q has a scale or translation of other than %d axes", d.Path, len(ms.Axes))
		}
	}
	m := omeMultiscale{Name: ms.Name}
	for _, a := range ms.Axes {
		b, _ := json.Marshal(a)
		m.Axes = append(m.Axes, b)
	}
	tf := func(scale, translation []float64, need bool) []omeTransform {
		var t []omeTransform
		if scale == nil && need {
			// OME-Zarr requires a scale on each dataset.
			scale = slices.Repeat([]float64{1}, len(ms.Axes))
		}
		if scale != nil {
			t = append(t, omeTransform{Type: "scale", Scale: scale})
		}
		if translation != nil {
			t = append(t, omeTransform{Type: "translation", Translation: translation})
		}
		return t
	}
	for _, d := range ms.Datasets {
		m.Datasets = append(m.Datasets, omeDataset{Path: d.Path, CoordinateTransformations: tf(d.Scale, d.Translation, true)})
	}
	m.CoordinateTransformations = tf(ms.Scale, ms.Translation, false)
	var attrs map[string]any
	switch format {
	case 2:
		m.Version = "0.4"
		attrs = map[string]any{"multiscales": []omeMultiscale{m}}
	case 3:
		attrs = map[string]any{"ome": map[string]any{"version": "0.5", "multiscales": []omeMultiscale{m}}}
	default:
		return argErrorf("format", "%d is neither 2 nor 3", format)
	}
	if err := writeGroup(ctx, s, group, format, attrs); err != nil {
		return fmt.Errorf("zarr: writing the multiscale group %q: %w", group, err)
	}
	return nil
}

// WithChannelFirst is ms with a channel axis "c" before its axes, as the
// output of a filter bank whose kernel axis comes first (the planar
// layout) carries it: a scale of 1 and a translation of 0 for it in every
// transformation given. It reports false, and returns ms, where ms has a
// channel axis already or a time axis (OME-Zarr allows one channel axis,
// and only after time).
func (ms Multiscale) WithChannelFirst() (Multiscale, bool) {
	if slices.ContainsFunc(ms.Axes, func(a Axis) bool { return a.Type == "channel" || a.Type == "time" }) {
		return ms, false
	}
	prepend := func(v []float64, first float64) []float64 {
		if v == nil {
			return nil
		}
		return append([]float64{first}, v...)
	}
	out := ms
	out.Axes = append([]Axis{{Name: "c", Type: "channel"}}, ms.Axes...)
	out.Datasets = make([]Dataset, len(ms.Datasets))
	for i, d := range ms.Datasets {
		out.Datasets[i] = Dataset{Path: d.Path, Scale: prepend(d.Scale, 1), Translation: prepend(d.Translation, 0)}
	}
	out.Scale, out.Translation = prepend(ms.Scale, 1), prepend(ms.Translation, 0)
	return out, true
}
