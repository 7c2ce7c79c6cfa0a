package gpu

import "strings"

// UnavailableMessage is how backend's UnavailableError reads: "cuda:
// unavailable: " and the reason, then the underlying error if any, without
// the backend's own prefix repeated ("cuda: unavailable: no CUDA driver
// library: cannot load libcuda.so.1 …").
func UnavailableMessage(backend, reason string, err error) string {
	s := backend + ": unavailable: " + reason
	if err != nil {
		s += ": " + strings.TrimPrefix(err.Error(), backend+": ")
	}
	return s
}
