//go:build noasm || !amd64

package jpeg

// yccToRGB is yccToRGBGo (no assembly on this platform or with the noasm
// tag).
func yccToRGB(dst, y, cb, cr []byte, w int) { yccToRGBGo(dst, y, cb, cr, w) }

// yccH2V2 is yccH2V2Go.
func yccH2V2(dst, y, bN, bF, rN, rF []byte, dw, w int) {
	yccH2V2Go(dst, y, bN, bF, rN, rF, dw, w)
}

// rgbToYCC is rgbToYCCGo.
func rgbToYCC(y, cb, cr, src []byte, w int) { rgbToYCCGo(y, cb, cr, src, w) }

// downH2V2 is downH2V2Go.
func downH2V2(out, in0, in1 []byte, n int) { downH2V2Go(out, in0, in1, n) }

// upH2V1 is upH2V1Go.
func upH2V1(out, in []byte, dw int) { upH2V1Go(out, in, dw) }
