package cuda

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

func TestParamBlockMarshal(t *testing.T) {
	pb := new(paramBlock)
	buf := &Buffer{ptr: 0x7f00_0000_1000}
	args := []any{int8(-5), buf, uint16(99), int32(-2), uint32(7), int64(-3), uint64(1 << 40), float32(1.5), float64(-0.25), int16(-1), uint8(200)}
	if err := pb.marshal(args); err != nil {
		t.Fatal(err)
	}
	u32 := func(i int) uint32 { return *(*uint32)(pb.ptrs[i]) }
	u64 := func(i int) uint64 { return *(*uint64)(pb.ptrs[i]) }
	checks := []struct {
		got, want uint64
	}{
		{uint64(*(*uint8)(pb.ptrs[0])), 0xfb},
		{u64(1), 0x7f00_0000_1000},
		{uint64(*(*uint16)(pb.ptrs[2])), 99},
		{u64(3), uint64(uint32(0xfffffffe))}, // the upper bytes zero
		{uint64(u32(4)), 7},
		{u64(5), uint64(0xfffffffffffffffd)},
		{u64(6), 1 << 40},
		{u64(7), uint64(math.Float32bits(1.5))},
		{u64(8), math.Float64bits(-0.25)},
		{uint64(*(*uint16)(pb.ptrs[9])), 0xffff},
		{uint64(*(*uint8)(pb.ptrs[10])), 200},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("argument %d (%T): slot holds %#x, want %#x", i, args[i], c.got, c.want)
		}
		if pb.ptrs[i] != unsafe.Pointer(&pb.slots[i]) {
			t.Errorf("argument %d: pointer is not to its slot", i)
		}
	}

	var ue *UnsupportedError
	if err := pb.marshal([]any{int(3)}); !errors.As(err, &ue) {
		t.Errorf("a Go int was accepted: %v", err)
	}
	if err := pb.marshal([]any{"text"}); !errors.As(err, &ue) {
		t.Errorf("a string was accepted: %v", err)
	}
	if err := pb.marshal([]any{(*Buffer)(nil)}); !errors.As(err, &ue) {
		t.Errorf("a nil *Buffer was accepted: %v", err)
	}
	if err := pb.marshal(make([]any, maxKernelParams+1)); !errors.As(err, &ue) {
		t.Errorf("%d arguments were accepted: %v", maxKernelParams+1, err)
	}
}

func TestVersions(t *testing.T) {
	if v := driverVersionOf(13000); v != (Version{13, 0}) || v.String() != "13.0" {
		t.Errorf("13000 → %v", v)
	}
	if v := driverVersionOf(12080); v != (Version{12, 8}) {
		t.Errorf("12080 → %v", v)
	}
	cc := ComputeCapability{9, 0}
	if cc.Arch() != "sm_90" || cc.String() != "9.0" || !cc.Supported() {
		t.Errorf("%v: arch %s", cc, cc.Arch())
	}
	if (ComputeCapability{12, 0}).Arch() != "sm_120" {
		t.Error("sm_120")
	}
	for cc, ok := range map[ComputeCapability]bool{{5, 3}: false, {6, 0}: true, {6, 1}: true, {3, 7}: false, {10, 0}: true} {
		if cc.Supported() != ok {
			t.Errorf("%v supported = %v", cc, !ok)
		}
	}
}

func TestRangeChecks(t *testing.T) {
	b := &Buffer{size: 100}
	for _, c := range []struct{ off, n int }{{-1, 1}, {0, 101}, {100, 1}, {50, 51}, {0, -1}, {101, 0}, {1, math.MaxInt}} {
		var re *RangeError
		if err := gpu.CheckRange("cuda", "Op", b, c.off, c.n); !errors.As(err, &re) {
			t.Errorf("CheckRange(%d, %d) = %v, want a *RangeError", c.off, c.n, err)
		}
	}
	for _, c := range []struct{ off, n int }{{0, 100}, {100, 0}, {99, 1}, {0, 0}} {
		if err := gpu.CheckRange("cuda", "Op", b, c.off, c.n); err != nil {
			t.Errorf("CheckRange(%d, %d) = %v", c.off, c.n, err)
		}
	}
	// Out-of-range requests fail before any driver call: no device needed.
	var s Stream
	if err := s.Write(b, 90, make([]byte, 20)); err == nil {
		t.Error("an overflowing write was accepted")
	}
	if err := s.Read(make([]byte, 20), b, 90); err == nil {
		t.Error("an overflowing read was accepted")
	}
	if err := s.Fill(b, 0, 101, 0); err == nil {
		t.Error("an overflowing fill was accepted")
	}
	if err := s.Copy(b, 0, &Buffer{size: 10}, 5, 6); err == nil {
		t.Error("a copy reading past its source was accepted")
	}
}
