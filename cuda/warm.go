package cuda

// What a planner asks before it chooses a device: what a device is and
// whether it is open already, without creating a context (Planner says
// which kernels an engine would still have to compile).

// StaticInfo describes device index as far as the driver tells without a
// context (FreeMemory is 0): cheap, where Devices opens every device.
func StaticInfo(index int) (Info, error) {
	if err := loadDriver(); err != nil {
		return Info{}, err
	}
	info, _, err := queryDevice(index)
	return info, err
}

// IsOpen reports whether device index is open in this process (its
// context made), without opening it.
func IsOpen(index int) bool {
	_, ok := registry.Lookup(index)
	return ok
}
