package nd

import (
	"slices"
	"testing"
)

// TestBytes: the byte view has the data's size and aliases it.
func TestBytes(t *testing.T) {
	for _, dt := range []DType{Uint8, Uint16, Int16, Int32, Float32, Float64} {
		a, err := New(dt, 3, 5)
		if err != nil {
			t.Fatal(err)
		}
		b := a.Bytes()
		if len(b) != 15*dt.Size() {
			t.Fatalf("%v: %d bytes", dt, len(b))
		}
		b[len(b)-1] = 0x40 // the last element's most significant byte (little endian)
		if a.Float64s()[14] == 0 {
			t.Errorf("%v: the view does not alias the data", dt)
		}
	}
	if (Array{}).Bytes() != nil {
		t.Error("an empty array has bytes")
	}
}

func TestAsBytes(t *testing.T) {
	if b := AsBytes([]uint16{0x0102, 0x0304}); !slices.Equal(b, []byte{2, 1, 4, 3}) {
		t.Errorf("uint16: % x (a little-endian machine is assumed)", b)
	}
	if AsBytes([]float32(nil)) != nil || AsBytes([]int32{}) != nil {
		t.Error("an empty slice is not nil")
	}
	s := []int32{1, 2}
	AsBytes(s)[4] = 9
	if s[1] != 9 {
		t.Error("AsBytes copied")
	}
}
