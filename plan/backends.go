package plan

// This build's backends, one line each. Auto prefers the first GPU backend
// that offers it a device (CUDA, then an OpenCL GPU), and device-string
// messages list the forms in this order.
func init() {
	Register(cpuBackend{})
	Register(cudaBackend{})
	Register(openclBackend{})
}
