//go:build !unix

package imageio

import "os"

func mapFile(*os.File, int64) ([]byte, error) { return nil, ErrNotMappable }

func unmapFile([]byte) error { return nil }

func releaseMapped([]byte) {}
