// Package sample embeds the small real data the demo runs on: a photograph
// (NASA's portrait of Eileen Collins, public domain, as scikit-image ships
// it), a functional MRI volume of a head (from nibabel's test data, MIT
// licence) and an electrocardiogram (MIT-BIH, via scipy). Where each comes
// from and its licence: scripts/make_sample.py, which writes them.
package sample
