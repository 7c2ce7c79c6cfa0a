// Package sample embeds the small real data the demo runs on: a photograph
// (scipy's "ascent"), an electrocardiogram and a test volume. Where each
// comes from and its licence: scripts/make_sample.py, which writes them.
package sample
