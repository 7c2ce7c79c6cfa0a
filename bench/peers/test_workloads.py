"""Self-test of the peers' shared module and of the CPU peers.

    /usr/bin/python3 -m unittest discover -s bench/peers -p 'test_*.py'
    /usr/bin/python3 bench/peers/test_workloads.py

Checks the README's data formulas by brute force on small shapes, the border
rules against ndconv's definition, the float64 reference against scipy, and
that OpenCV, scipy and (emulated on the CPU) the GPU peers give the checksum
of the reference on small workloads. Tests needing scipy, OpenCV or torch
are skipped where those are missing.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import workloads as wl  # noqa: E402


def have(mod):
    try:
        __import__(mod)
        return True
    except ImportError:
        return False


def W(**kw):
    d = {"kind": "workload", "set": "test", "id": "t", "shape": [9, 11], "dtype": "float32",
         "out_dtype": "float32", "kernel": [3, 3], "separable": False, "bank": 1, "channels": 1,
         "mode": "same", "border": "constant", "cval": 0, "rounds": 1, "transfers": False}
    d.update(kw)
    return d


# Small workloads the peers must agree on (constant border, same mode, 2-D,
# 1 and 4 channels, uint8 and float32, separable and full) and a few more.
CASES = [
    W(id="c1-f32-full", shape=[23, 29], kernel=[5, 5]),
    W(id="c1-u8-full", shape=[23, 29], dtype="uint8", out_dtype="uint8", kernel=[5, 7]),
    W(id="c4-u8-full", shape=[17, 19, 4], channels=4, dtype="uint8", out_dtype="uint8", kernel=[3, 5]),
    W(id="c4-f32-full", shape=[17, 19, 4], channels=4, kernel=[5, 3], bank=2),
    W(id="c1-f32-sep", shape=[23, 29], kernel=[7, 5], separable=True),
    W(id="c1-u8-sep", shape=[23, 29], dtype="uint8", out_dtype="uint8", kernel=[5, 5], separable=True, bank=2),
    W(id="c4-u8-sep", shape=[17, 19, 4], channels=4, dtype="uint8", out_dtype="uint8", kernel=[7, 3], separable=True),
    W(id="c4-f32-sep", shape=[17, 19, 4], channels=4, kernel=[3, 7], separable=True),
    W(id="u8-f32-even", shape=[20, 21], dtype="uint8", out_dtype="float32", kernel=[4, 6]),
    W(id="f32-u8-reflect", shape=[15, 16], out_dtype="uint8", kernel=[5, 5], border="reflect"),
    W(id="mirror-sep", shape=[15, 16], kernel=[5, 4], separable=True, border="mirror"),
    W(id="nearest-c3", shape=[15, 16, 3], channels=3, kernel=[3, 5], border="nearest"),
    W(id="wrap", shape=[15, 16], kernel=[5, 3], border="wrap"),
    W(id="cval", shape=[15, 16], kernel=[5, 4], border="constant", cval=2.5, bank=3),
    W(id="valid-3d", shape=[10, 11, 12], dtype="uint8", kernel=[3, 4, 5], mode="valid", bank=2),
    W(id="same-3d-sep", shape=[10, 11, 12], kernel=[3, 3, 5], separable=True, border="reflect"),
    W(id="1d", shape=[50, 2], channels=2, kernel=[6], border="wrap"),
    W(id="rounds", shape=[12, 13], kernel=[3, 3], rounds=3, transfers=True),
]


def ref_checksum(w):
    return wl.checksum(wl.round_saturate(wl.reference(w), w.out_dtype))


def close(test, w, got, want, what, rel=2e-5):
    test.assertIsNotNone(got, "%s %s: no checksum" % (what, w.id))
    if w.out_is_int:
        tol = 1e-3 * w.out_elements + 1.0
    else:
        tol = rel * max(1.0, abs(want))
    test.assertLessEqual(abs(got - want), tol, "%s %s: %r vs reference %r" % (what, w.id, got, want))


def run_main(main, argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    return [json.loads(l) for l in buf.getvalue().splitlines() if l.strip()]


def write_lines(lines):
    f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
    for d in lines:
        f.write(json.dumps(d) + "\n")
    f.close()
    return f.name


class TestData(unittest.TestCase):
    def test_input_uint8(self):
        w = wl.Workload(W(shape=[3, 4, 5], dtype="uint8", kernel=[3, 3, 3]))
        x = wl.make_input(w)
        self.assertEqual(x.shape, (3, 4, 5))
        self.assertEqual(x.dtype, np.uint8)
        flat = x.reshape(-1)
        for i in range(flat.size):
            self.assertEqual(int(flat[i]), (i * 7919) % 251)

    def test_input_float32(self):
        w = wl.Workload(W(shape=[7, 6], dtype="float32"))
        x = wl.make_input(w).reshape(-1)
        for i in range(x.size):
            self.assertEqual(x[i], np.float32(((i * 7919) % 1009) / 1009.0))

    def test_input_chunks_and_large_index(self):
        # chunk boundaries, and an index where i*7919 needs more than 32 bits
        old = wl._CHUNK
        try:
            wl._CHUNK = 7
            w = wl.Workload(W(shape=[5, 9], dtype="uint8"))
            x = wl.make_input(w).reshape(-1)
            self.assertEqual([int(v) for v in x], [(i * 7919) % 251 for i in range(45)])
        finally:
            wl._CHUNK = old
        i = np.arange(600000, 600003, dtype=np.int64)
        self.assertEqual(list((i * 7919) % 251), [(int(v) * 7919) % 251 for v in i])

    def test_no_formula(self):
        w = wl.Workload(W(dtype="int16"))
        with self.assertRaises(wl.Unsupported):
            wl.make_input(w)

    def test_full_weights(self):
        w = wl.Workload(W(kernel=[3, 4, 2], shape=[5, 5, 5], bank=3))
        k = wl.full_weights(w)
        self.assertEqual(k.shape, (3, 3, 4, 2))
        self.assertEqual(k.dtype, np.float32)
        for b in range(3):
            r = [((j * 31 + b * 17) % 23) + 1 for j in range(24)]
            s = float(sum(r))
            want = [np.float32(v / s) for v in r]
            self.assertEqual(list(k[b].reshape(-1)), want)

    def test_separable_factors_and_outer(self):
        w = wl.Workload(W(kernel=[3, 5], separable=True, bank=2))
        fs = wl.separable_factors(w)
        full = wl.full_weights(w)
        for b in range(2):
            for a, k in enumerate((3, 5)):
                r = [((j * 31 + a * 17 + b * 5) % 23) + 1 for j in range(k)]
                s = float(sum(r))
                self.assertEqual(list(fs[b][a]), [v / s for v in r])
            for i in range(3):
                for j in range(5):
                    self.assertEqual(full[b, i, j], np.float32(fs[b][0][i] * fs[b][1][j]))

    def test_workload_fields(self):
        w = wl.Workload(W(shape=[20, 30, 4], channels=4, kernel=[5, 7], mode="valid", bank=3))
        self.assertEqual(w.out_spatial, (16, 24))
        self.assertEqual(w.out_shape, (16, 24, 4, 3))
        self.assertEqual(w.C, 4)
        self.assertEqual(wl.Workload(W(border="grid-wrap")).border, "wrap")
        with self.assertRaises(ValueError):
            wl.Workload(W(shape=[20, 30, 4], channels=3))

    def test_parse_skips_other_kinds(self):
        lines = ['{"kind":"roofline","device":"x"}', "", "# comment", json.dumps(W(id="a")),
                 '{"kind":"result","id":"a"}']
        ws = wl.parse_lines(lines)
        self.assertEqual([w.id for w in ws], ["a"])


class TestRules(unittest.TestCase):
    @staticmethod
    def go_index(b, p, n):
        # nd.Border.Index, transcribed
        if 0 <= p < n:
            return p
        if b == "reflect":
            q = p % (2 * n)
            return 2 * n - 1 - q if q >= n else q
        if b == "mirror":
            if n == 1:
                return 0
            q = p % (2 * n - 2)
            return 2 * n - 2 - q if q >= n else q
        if b == "nearest":
            return 0 if p < 0 else n - 1
        if b == "wrap":
            return p % n
        return -1

    def test_border_index(self):
        for b in ("reflect", "mirror", "nearest", "wrap", "constant"):
            for n in range(1, 6):
                ps = np.arange(-13, n + 13)
                got = wl.border_index(ps, n, b)
                self.assertEqual(list(got), [self.go_index(b, int(p), n) for p in ps], (b, n))

    def test_round_saturate(self):
        y = np.array([0.5, 1.5, 2.5, -0.5, 254.5, 255.5, 300.0, -3.0, 7.49], dtype=np.float32)
        self.assertEqual(list(wl.round_saturate(y, "uint8")), [0, 2, 2, 0, 254, 255, 255, 0, 7])
        self.assertEqual(list(wl.round_saturate(np.array([-40000.5, 1.5]), "int16")), [-32768, 2])

    def test_result_line(self):
        w = wl.Workload(W(id="x"))
        d = wl.result(w, "s", "dev", "direct", [3.0, 1.0, 2.0], 5.0, ["a", "", "b"])
        self.assertEqual((d["ms_median"], d["ms_min"], d["repeats"], d["note"]), (2.0, 1.0, 3, "a; b"))
        d = wl.result(w, "s", "dev", "direct", note="why")
        self.assertIsNone(d["ms_median"])
        self.assertEqual(d["kind"], "result")

    @unittest.skipUnless(have("scipy"), "needs scipy")
    def test_reference_matches_scipy(self):
        import scipy.ndimage as ndi
        for b in ("reflect", "mirror", "nearest", "wrap", "constant"):
            for k in ([3, 4], [5, 5], [2, 7]):
                w = wl.Workload(W(shape=[9, 10], kernel=k, border=b, cval=1.25))
                x = wl.make_input(w).astype(np.float64)
                want = ndi.correlate(x, wl.full_weights(w)[0].astype(np.float64), mode=b, cval=1.25)
                np.testing.assert_allclose(wl.reference(w), want, rtol=1e-12, atol=1e-12, err_msg=str((b, k)))

    def test_pad_far(self):
        # padding wider than the axis (kernel larger than the image)
        x = np.arange(3, dtype=np.float64)
        for b in ("reflect", "mirror", "nearest", "wrap"):
            got = wl.pad_input(x, ((5, 6),), b)
            want = [x[self.go_index(b, p, 3)] for p in range(-5, 3 + 6)]
            self.assertEqual(list(got), want, b)


@unittest.skipUnless(have("cv2") and have("scipy"), "needs python3-opencv and python3-scipy")
class TestCpuPeers(unittest.TestCase):
    def test_checksums_agree(self):
        import cpu_peers
        path = write_lines(CASES)
        try:
            lines = run_main(cpu_peers.main, [path, "--repeats", "2"])
        finally:
            os.unlink(path)
        ws = {d["id"]: wl.Workload(d) for d in CASES}
        seen = {}
        for d in lines:
            self.assertEqual(d["kind"], "result")
            w = ws[d["id"]]
            self.assertIsNotNone(d["ms_median"], d)
            close(self, w, d["checksum"], ref_checksum(w), d["system"])
            seen.setdefault(d["id"], set()).add(d["system"])
        for d in CASES:
            want = {"opencv", "scipy"} | ({"opencv-separable", "scipy-separable"} if d["separable"] else set())
            self.assertEqual(seen.get(d["id"]), want, d["id"])

    def test_unsupported_gets_null(self):
        import cpu_peers
        path = write_lines([W(id="i16", dtype="int16"), W(id="4d", shape=[4, 4, 4, 4], kernel=[3, 3, 3, 3])])
        try:
            lines = run_main(cpu_peers.main, [path, "--repeats", "1", "--systems", "opencv"])
        finally:
            os.unlink(path)
        self.assertEqual(len(lines), 2)
        for d in lines:
            self.assertIsNone(d["ms_median"])
            self.assertTrue(d["note"])


class TestGpuPeers(unittest.TestCase):
    def test_dry_run_imports_nothing(self):
        import gpu_peers
        path = write_lines(CASES)
        try:
            lines = run_main(gpu_peers.main, [path, "--dry-run"])
        finally:
            os.unlink(path)
        self.assertNotIn("cupy", sys.modules)
        systems = {(d["id"], d["system"]) for d in lines}
        self.assertIn(("c1-f32-sep", "cupy-separable"), systems)
        self.assertNotIn(("c1-f32-full", "cupy-separable"), systems)
        self.assertIn(("valid-3d", "cudnn"), systems)

    @unittest.skipUnless(have("scipy"), "needs scipy")
    def test_emulated_checksums(self):
        import gpu_peers
        systems = ["cupy", "cupy-separable", "cupy-fft"] + (["cudnn", "cudnn-tf32"] if have("torch") else [])
        path = write_lines(CASES)
        try:
            lines = run_main(gpu_peers.main, [path, "--emulate", "--repeats", "1", "--warmup", "1",
                                              "--systems", ",".join(systems)])
        finally:
            os.unlink(path)
        ws = {d["id"]: wl.Workload(d) for d in CASES}
        n = 0
        for d in lines:
            w = ws[d["id"]]
            self.assertIsNotNone(d["ms_median"], d)
            rel = 1e-4 if d["system"] == "cupy-fft" else 2e-5
            close(self, w, d["checksum"], ref_checksum(w), d["system"], rel)
            n += 1
        self.assertGreaterEqual(n, len(CASES) * 2)


class TestNppPeer(unittest.TestCase):
    def test_dry_run_and_inputs(self):
        import npp_peer
        path = write_lines(CASES)
        try:
            lines = run_main(npp_peer.main, [path, "--dry-run"])
        finally:
            os.unlink(path)
        by = {(d["id"], d["system"]): d for d in lines}
        self.assertIn("would run", by[("c4-u8-sep", "npp-separable")]["note"])
        self.assertIsNone(by[("valid-3d", "npp")]["ms_median"])
        self.assertIn("2-D", by[("valid-3d", "npp")]["note"])
        # the padded source is what the reference correlates in 'valid' mode
        w = wl.Workload(CASES[9])  # f32-u8-reflect
        p = npp_peer.plan(w, "npp")
        with tempfile.TemporaryDirectory() as tmp:
            _, kfile, P, hp, wp, kh, kw = npp_peer.write_inputs(w, p, tmp)
            self.assertEqual((hp, wp), (w.spatial[0] + kh - 1, w.spatial[1] + kw - 1))
            k = np.fromfile(kfile, dtype=np.float32).reshape(kh, kw)
        out = np.zeros(w.out_spatial)
        for i in range(kh):
            for j in range(kw):
                out += k[i, j] * P[i:i + w.out_spatial[0], j:j + w.out_spatial[1]].astype(np.float64)
        np.testing.assert_allclose(out, wl.reference(w), rtol=1e-6)


if __name__ == "__main__":
    unittest.main()
