package nd

import "testing"

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
