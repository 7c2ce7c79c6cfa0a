package bench

// Roofline is the line `ndconv bench` prints once per device: what the
// device sustains, measured in the same run as the workloads.
type Roofline struct {
	Kind      string  `json:"kind"` // "roofline"
	Device    string  `json:"device"`
	CopyGBps  float64 `json:"copy_gbps"`  // bytes read + bytes written per second, in GB/s
	FMAGFlops float64 `json:"fma_gflops"` // 2 FLOPs per multiply-add
	CopyMs    float64 `json:"copy_ms"`
	FMAMs     float64 `json:"fma_ms"`
	// Pinned host↔device transfer rates (GPUs): each way, and both at
	// once counting the bytes of both.
	PCIeHtoDGBps float64 `json:"pcie_htod_gbps,omitempty"`
	PCIeDtoHGBps float64 `json:"pcie_dtoh_gbps,omitempty"`
	PCIeGBps     float64 `json:"pcie_gbps,omitempty"`
	Note         string  `json:"note,omitempty"`
}

// Floor is the least time, in seconds, a workload can take on a device
// with roofline r: its bytes moved once at the copy bandwidth, or its
// multiply-adds at the FMA peak, whichever is longer.
func (r Roofline) Floor(bytes, madds int64) float64 {
	return max(float64(bytes)/(r.CopyGBps*1e9), 2*float64(madds)/(r.FMAGFlops*1e9))
}

// Percent is 100 × floor ÷ measured time: how close a time of ms
// milliseconds comes to the roofline.
func (r Roofline) Percent(bytes, madds int64, ms float64) float64 {
	if ms <= 0 || r.CopyGBps <= 0 || r.FMAGFlops <= 0 {
		return 0
	}
	return 100 * r.Floor(bytes, madds) / (ms / 1e3)
}
