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

// TestOverlap: views of one buffer overlap where their bytes do, whatever
// their element types; separate buffers and empty arrays never do.
func TestOverlap(t *testing.T) {
	buf := make([]float32, 16)
	bytes := AsBytes(buf)
	view := func(lo, hi int) Array { return Array{Shape: []int{hi - lo}, Data: buf[lo:hi]} }
	cases := []struct {
		name string
		a, b Array
		want bool
	}{
		{"itself", view(0, 16), view(0, 16), true},
		{"shifted", view(0, 8), view(4, 12), true},
		{"shifted back", view(4, 12), view(0, 8), true},
		{"adjacent", view(0, 8), view(8, 16), false},
		{"adjacent back", view(8, 16), view(0, 8), false},
		{"inside", view(0, 16), view(5, 6), true},
		{"other type", view(0, 4), Array{Shape: []int{4}, Data: ViewBytes(Uint16, bytes[14:22])}, true},
		{"other type, apart", view(0, 4), Array{Shape: []int{4}, Data: ViewBytes(Uint16, bytes[16:24])}, false},
		{"empty", view(4, 4), view(0, 16), false},
		{"separate", view(0, 16), Array{Shape: []int{16}, Data: make([]float32, 16)}, false},
		{"no data", Array{}, view(0, 16), false},
	}
	for _, c := range cases {
		if got := Overlap(c.a, c.b); got != c.want {
			t.Errorf("%s: Overlap = %v, want %v", c.name, got, c.want)
		}
	}
}
