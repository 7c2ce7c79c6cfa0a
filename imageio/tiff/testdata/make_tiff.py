#!/usr/bin/python3
"""Reference TIFF files for package tiff, and the reference readers' view of
the files package tiff writes.

Run from imageio/tiff/testdata with Debian's Python (tifffile 2023.2.3,
numpy 1.24; libtiff 4.5 through ctypes):

    /usr/bin/python3 make_tiff.py

1. Writes ref/*.tif with two independent writers and records in
   fixtures.json what each file must decode to under package tiff's dtype
   mapping (doc.go), or which error it must give:
   - tifffile for every sample type (8 to 64-bit integers, 16 to 64-bit
     floats), 0/2/3/4 channels, one and several pages, strips and tiles,
     contiguous and separate planes, both byte orders, classic and BigTIFF,
     no compression, Deflate (both tag values), predictor 2, palette,
     MinIsWhite, reduced-resolution pages, and files to refuse;
   - libtiff itself (ctypes) for what tifffile cannot write without the
     imagecodecs package (not on Debian): LZW, PackBits and the
     floating-point predictor 3, in both byte orders (big-endian predictor
     3 strips encoded here, see lt_write, and checked with libtiff's
     reader).
   The expected array is the samples given to the writer, recorded (as
   shape, dtype and SHA-256 of the little-endian bytes, to keep testdata
   small) only after the writer's own reader, and for tifffile's files
   libtiff's too, read exactly those samples back.
2. Reads golden/*.tif, written by package tiff (go test -run TestGolden
   -update), with libtiff and, where it can decode them, with tifffile,
   checks that the two agree, and records what they read in golden.json.
   The Go test compares that with the arrays it wrote.

So: after a change to the writer, `go test -run TestGolden -update`, then
this script, then `go test`.
"""

import ctypes
import hashlib
import json
import os
import sys
import zlib

import numpy as np
import tifffile

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "ref")
GOLDEN = os.path.join(HERE, "golden")

rng = np.random.default_rng(20240611)

# ---------------------------------------------------------------- libtiff

lib = ctypes.CDLL("libtiff.so.6")
lib.TIFFOpen.restype = ctypes.c_void_p
lib.TIFFOpen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
for name in ("TIFFClose", "TIFFWriteDirectory", "TIFFReadDirectory", "TIFFIsTiled"):
    getattr(lib, name).argtypes = [ctypes.c_void_p]
lib.TIFFTileSize.restype = ctypes.c_ssize_t
lib.TIFFTileSize.argtypes = [ctypes.c_void_p]
lib.TIFFStripSize.restype = ctypes.c_ssize_t
lib.TIFFStripSize.argtypes = [ctypes.c_void_p]
lib.TIFFComputeTile.restype = ctypes.c_uint32
lib.TIFFComputeTile.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint16]
lib.TIFFComputeStrip.restype = ctypes.c_uint32
lib.TIFFComputeStrip.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint16]
for name in ("TIFFReadEncodedStrip", "TIFFReadEncodedTile", "TIFFWriteEncodedStrip", "TIFFWriteEncodedTile", "TIFFWriteRawStrip"):
    f = getattr(lib, name)
    f.restype = ctypes.c_ssize_t
    f.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_ssize_t]
# TIFFSetField and TIFFGetField are variadic: their arguments are given as
# ctypes values (integers promote to int, as C's default promotions do).
lib.TIFFSetField.restype = ctypes.c_int
lib.TIFFGetFieldDefaulted.restype = ctypes.c_int
lib.TIFFGetField.restype = ctypes.c_int

T_WIDTH, T_LENGTH, T_BPS, T_COMPRESSION, T_PHOTOMETRIC = 256, 257, 258, 259, 262
T_SPP, T_RPS, T_PLANAR, T_PREDICTOR, T_COLORMAP = 277, 278, 284, 317, 320
T_TILEWIDTH, T_TILELENGTH, T_EXTRASAMPLES, T_SAMPLEFORMAT = 322, 323, 338, 339
T_XRES, T_YRES, T_RESUNIT = 282, 283, 296

FORMAT_CODE = {"u": 1, "i": 2, "f": 3}


def lt_set(tif, tag, *values):
    if lib.TIFFSetField(ctypes.c_void_p(tif), ctypes.c_uint32(tag), *values) != 1:
        raise RuntimeError(f"TIFFSetField({tag}) failed")


def fp_predictor_encode(rows, stride):
    """TIFF predictor 3 (Technical Note 3) on rows (R×N samples): each row's
    bytes regrouped most significant first, then differenced stride bytes
    apart."""
    size = rows.dtype.itemsize
    be = rows.astype(rows.dtype.newbyteorder(">")).view(np.uint8).reshape(rows.shape[0], -1, size)
    planes = np.swapaxes(be, 1, 2).reshape(rows.shape[0], -1)
    diff = planes.copy()
    diff[:, stride:] = planes[:, stride:] - planes[:, :-stride]
    return diff.tobytes()


def lt_write(path, pages, *, photometric, compression, predictor=1, planar=1,
             tile=None, rowsperstrip=2, byteorder="<", extrasamples=()):
    """Writes pages (P×H×W×S, native byte order) with libtiff.

    libtiff 4.5 writes the floating-point predictor wrongly into big-endian
    files (it swaps the bytes of each sample before regrouping them, so
    the least significant bytes come first; its reader, like the
    Technical Note, expects the most significant first). Those strips are
    encoded here (Deflate only) and written raw; lt_case then checks that
    libtiff's reader decodes them to the samples given."""
    raw_fp = predictor == 3 and byteorder == ">"
    assert not raw_fp or (compression == 8 and not tile)
    tif = lib.TIFFOpen(path.encode(), b"wb" if byteorder == ">" else b"wl")
    if not tif:
        raise RuntimeError("TIFFOpen " + path)
    p, h, w, spp = pages.shape
    for page in pages:
        lt_set(tif, T_WIDTH, ctypes.c_uint32(w))
        lt_set(tif, T_LENGTH, ctypes.c_uint32(h))
        lt_set(tif, T_SPP, ctypes.c_int(spp))
        lt_set(tif, T_BPS, ctypes.c_int(8 * pages.itemsize))
        lt_set(tif, T_SAMPLEFORMAT, ctypes.c_int(FORMAT_CODE[pages.dtype.kind]))
        lt_set(tif, T_PHOTOMETRIC, ctypes.c_int(photometric))
        lt_set(tif, T_PLANAR, ctypes.c_int(planar))
        lt_set(tif, T_COMPRESSION, ctypes.c_int(compression))
        if predictor != 1:
            lt_set(tif, T_PREDICTOR, ctypes.c_int(predictor))
        if extrasamples:
            arr = (ctypes.c_uint16 * len(extrasamples))(*extrasamples)
            lt_set(tif, T_EXTRASAMPLES, ctypes.c_int(len(extrasamples)), arr)
        planes = [page[..., s:s + 1] for s in range(spp)] if planar == 2 else [page]
        if tile:
            th, tw = tile
            lt_set(tif, T_TILEWIDTH, ctypes.c_uint32(tw))
            lt_set(tif, T_TILELENGTH, ctypes.c_uint32(th))
            for s, plane in enumerate(planes):
                for y in range(0, h, th):
                    for x in range(0, w, tw):
                        t = np.zeros((th, tw, plane.shape[2]), pages.dtype)
                        part = plane[y:y + th, x:x + tw]
                        t[:part.shape[0], :part.shape[1]] = part
                        buf = t.tobytes()
                        n = lib.TIFFComputeTile(tif, x, y, 0, s)
                        if lib.TIFFWriteEncodedTile(tif, n, buf, len(buf)) < 0:
                            raise RuntimeError("TIFFWriteEncodedTile")
        else:
            lt_set(tif, T_RPS, ctypes.c_uint32(rowsperstrip))
            for s, plane in enumerate(planes):
                for y in range(0, h, rowsperstrip):
                    rows = plane[y:y + rowsperstrip]
                    n = lib.TIFFComputeStrip(tif, y, s)
                    if raw_fp:
                        buf = zlib.compress(fp_predictor_encode(rows.reshape(rows.shape[0], -1), rows.shape[2]))
                        if lib.TIFFWriteRawStrip(tif, n, buf, len(buf)) < 0:
                            raise RuntimeError("TIFFWriteRawStrip")
                        continue
                    buf = np.ascontiguousarray(rows).tobytes()
                    if lib.TIFFWriteEncodedStrip(tif, n, buf, len(buf)) < 0:
                        raise RuntimeError("TIFFWriteEncodedStrip")
        if lib.TIFFWriteDirectory(tif) != 1:
            raise RuntimeError("TIFFWriteDirectory")
    lib.TIFFClose(tif)


def lt_get(tif, tag, ctype):
    v = ctype()
    if lib.TIFFGetFieldDefaulted(ctypes.c_void_p(tif), ctypes.c_uint32(tag), ctypes.byref(v)) != 1:
        return None
    return v.value


def lt_read(path):
    """Reads every page with libtiff: a list of (H×W×S array in native byte
    order, tags)."""
    tif = lib.TIFFOpen(path.encode(), b"r")
    if not tif:
        raise RuntimeError("TIFFOpen " + path)
    pages = []
    while True:
        w, h = lt_get(tif, T_WIDTH, ctypes.c_uint32), lt_get(tif, T_LENGTH, ctypes.c_uint32)
        spp, bps = lt_get(tif, T_SPP, ctypes.c_uint16), lt_get(tif, T_BPS, ctypes.c_uint16)
        fmt, planar = lt_get(tif, T_SAMPLEFORMAT, ctypes.c_uint16), lt_get(tif, T_PLANAR, ctypes.c_uint16)
        dtype = np.dtype("uif"[fmt - 1] + str(bps // 8))
        nplanes, per = (spp, 1) if planar == 2 else (1, spp)
        out = np.zeros((h, w, spp), dtype)
        if lib.TIFFIsTiled(tif):
            tw, th = lt_get(tif, T_TILEWIDTH, ctypes.c_uint32), lt_get(tif, T_TILELENGTH, ctypes.c_uint32)
            size = lib.TIFFTileSize(tif)
            for s in range(nplanes):
                for y in range(0, h, th):
                    for x in range(0, w, tw):
                        buf = ctypes.create_string_buffer(size)
                        if lib.TIFFReadEncodedTile(tif, lib.TIFFComputeTile(tif, x, y, 0, s), buf, -1) != size:
                            raise RuntimeError("TIFFReadEncodedTile " + path)
                        t = np.frombuffer(buf.raw, dtype).reshape(th, tw, per)
                        part = out[y:y + th, x:x + tw, s:s + per] if planar == 2 else out[y:y + th, x:x + tw]
                        part[...] = t[:part.shape[0], :part.shape[1]]
        else:
            rps = min(lt_get(tif, T_RPS, ctypes.c_uint32), h)
            for s in range(nplanes):
                for y in range(0, h, rps):
                    rows = min(rps, h - y)
                    buf = ctypes.create_string_buffer(rows * w * per * dtype.itemsize)
                    if lib.TIFFReadEncodedStrip(tif, lib.TIFFComputeStrip(tif, y, s), buf, len(buf.raw)) != len(buf.raw):
                        raise RuntimeError("TIFFReadEncodedStrip " + path)
                    t = np.frombuffer(buf.raw, dtype).reshape(rows, w, per)
                    if planar == 2:
                        out[y:y + rows, :, s] = t[..., 0]
                    else:
                        out[y:y + rows] = t
        compression = lt_get(tif, T_COMPRESSION, ctypes.c_uint16)
        tags = {
            "compression": compression,
            "photometric": lt_get(tif, T_PHOTOMETRIC, ctypes.c_uint16),
            # (libtiff knows the tag only where the codec has a predictor)
            "predictor": lt_get(tif, T_PREDICTOR, ctypes.c_uint16) if compression in (5, 8, 32946) else 1,
            "planar": planar,
            "resolution_unit": lt_get(tif, T_RESUNIT, ctypes.c_uint16),
        }
        extra_count, extra = ctypes.c_uint16(), ctypes.POINTER(ctypes.c_uint16)()
        if lib.TIFFGetField(ctypes.c_void_p(tif), ctypes.c_uint32(T_EXTRASAMPLES), ctypes.byref(extra_count), ctypes.byref(extra)) == 1:
            tags["extrasamples"] = [extra[i] for i in range(extra_count.value)]
        else:
            tags["extrasamples"] = []
        pages.append((out, tags))
        if not lib.TIFFReadDirectory(tif):
            break
    lib.TIFFClose(tif)
    return pages


# ------------------------------------------------------------ sample data

def random_samples(dtype, shape):
    """Values over the whole range of dtype; floats with NaN, ±Inf, −0 and
    subnormals; 64-bit integers only values float64 holds exactly."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dt)
        flat = a.reshape(-1)
        special = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).tiny / 2, np.finfo(dt).max]
        flat[:len(special)] = np.array(special, dt)[:flat.size]
        return a
    info = np.iinfo(dt)
    if dt.itemsize == 8:
        a = rng.integers(-(2 ** 53) if dt.kind == "i" else 0, 2 ** 53, shape, dtype=dt)
        flat = a.reshape(-1)
        flat[0] = info.max - (info.max % 2048)  # large, yet a float64 exactly
        if dt.kind == "i":
            flat[1] = info.min
        return a
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


def ndconv_view(a, photometric="minisblack", colormap=None):
    """What package tiff decodes stored samples a (…×S) to (doc.go)."""
    if photometric == "palette":
        return np.moveaxis(colormap[:, a[..., 0]], 0, -1).astype(np.uint16)
    if photometric == "miniswhite":
        a = a.copy()
        a[..., 0] = np.iinfo(a.dtype).max - a[..., 0]
    # Every sample type decodes to the dtype of the same name.
    out = a.copy()
    return out


def record(arr, channels, pages):
    """The JSON form of an expected array: ndconv's shape and dtype, and the
    SHA-256 of its little-endian bytes (the arrays themselves would be
    larger than the files)."""
    shape = list(arr.shape)
    if pages == 1:
        shape = shape[1:]
    if channels == 0:
        shape = shape[:-1]
    le = arr.astype(arr.dtype.newbyteorder("<"))
    return {"shape": shape, "dtype": str(arr.dtype), "channels": channels,
            "sha256": hashlib.sha256(le.tobytes()).hexdigest()}


# ------------------------------------------------------ reference files

fixtures = {}


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype.kind == b.dtype.kind and a.tobytes() == b.astype(a.dtype).tobytes()


def tf_case(name, samples, *, channels, photometric=None, compression=None, predictor=None,
            planar="contig", tile=None, rowsperstrip=2, byteorder="<", bigtiff=False,
            colormap=None, subfile_pages=()):
    """Writes samples (P×H×W×S) with tifffile, one page per write, and
    records the expected array. subfile_pages: indices of pages written as
    reduced-resolution images (NewSubfileType 1) of half size, which
    package tiff skips."""
    path = os.path.join(REF, name + ".tif")
    p, h, w, spp = samples.shape
    if photometric is None:
        photometric = "rgb" if spp >= 3 else "minisblack"
    extrasamples = ["unassalpha"] if spp in (2, 4) else None
    kept = []
    with tifffile.TiffWriter(path, byteorder=byteorder, bigtiff=bigtiff) as tw:
        for i, page in enumerate(samples):
            if i in subfile_pages:
                small = page[::2, ::2] if spp > 1 else page[::2, ::2, 0]
                tw.write(small, photometric=photometric, planarconfig="contig" if spp > 1 else None,
                         extrasamples=extrasamples, subfiletype=1, metadata=None,
                         colormap=colormap)
                continue
            kept.append(page)
            data = page
            if planar == "separate":
                data = np.moveaxis(page, -1, 0)
            elif spp == 1:
                data = page[..., 0]
            tw.write(data, photometric=photometric, planarconfig=planar if spp > 1 else None,
                     extrasamples=extrasamples, compression=compression, predictor=predictor,
                     tile=tile, rowsperstrip=None if tile else rowsperstrip, metadata=None,
                     colormap=colormap)
    kept = np.stack(kept)
    # tifffile's own reading must give back what it was given.
    with tifffile.TiffFile(path) as tf:
        full = [pg for pg in tf.pages if not pg.subfiletype & 1]
        for pg, want in zip(full, kept):
            got = pg.asarray()
            if planar == "separate":
                got = np.moveaxis(got, 0, -1)
            assert same(got.reshape(want.shape), want), name
    fixtures[name + ".tif"] = record(ndconv_view(kept, photometric, colormap), channels, len(kept))


def lt_case(name, samples, *, channels, compression, predictor=1, planar=1, tile=None,
            rowsperstrip=2, byteorder="<"):
    """Writes samples (P×H×W×S) with libtiff and records the expected
    array."""
    path = os.path.join(REF, name + ".tif")
    spp = samples.shape[3]
    photometric = 2 if spp >= 3 else 1
    extrasamples = (2,) if spp in (2, 4) else ()
    lt_write(path, samples, photometric=photometric, compression=compression, predictor=predictor,
             planar=planar, tile=tile, rowsperstrip=rowsperstrip, byteorder=byteorder,
             extrasamples=extrasamples)
    back = np.stack([a for a, _ in lt_read(path)])
    assert same(back, samples), name
    fixtures[name + ".tif"] = record(ndconv_view(samples), channels, samples.shape[0])


def error_case(name, kind, contains):
    fixtures[name + ".tif"] = {"error": kind, "contains": contains}


def make_reference_files():
    os.makedirs(REF, exist_ok=True)
    for f in os.listdir(REF):
        os.remove(os.path.join(REF, f))
    # Every sample type, its cases cycling through the other dimensions so
    # that each value of each dimension occurs with several types.
    dtypes = ["u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f2", "f4", "f8"]
    channel_cycle = [0, 3, 2, 4, 3, 0, 4, 2]
    for di, dt in enumerate(dtypes):
        for ci in range(4):
            k = di + ci
            ch = channel_cycle[k % len(channel_cycle)]
            spp = max(ch, 1)
            tiled = k % 3 == 0
            # Tiles are 16×16 at the least, so tiled images have one page of
            # 2×2 tiles, cropped on both axes, and are compressed (which
            # removes the padding) but for a few small ones.
            pages = 3 if k % 2 and not tiled else 1
            shape = (pages, 17, 18, spp) if tiled else (pages, 5, 7, spp)
            compression = [None, "zlib", "deflate", None][k % 4]
            if tiled and compression is None and np.dtype(dt).itemsize * spp > 2:
                compression = "zlib"
            # tifffile alone has predictor 2 for integers up to 32 bits.
            predictor = bool(compression) and dt[0] != "f" and dt[1] in "124" and k % 5 != 1
            planar = "separate" if spp > 1 and k % 3 == 1 else "contig"
            byteorder = ">" if k % 4 in (1, 2) else "<"
            bigtiff = k % 7 == 3
            name = "-".join(x for x in [
                "tf", dt, f"c{ch}", f"p{pages}", compression or "none", "pred" if predictor else "",
                "sep" if planar == "separate" else "", "tile" if tiled else "strip",
                "be" if byteorder == ">" else "le", "big" if bigtiff else ""] if x)
            tf_case(name, random_samples(dt, shape), channels=ch, compression=compression,
                    predictor=predictor, planar=planar, tile=(16, 16) if tiled else None,
                    byteorder=byteorder, bigtiff=bigtiff)
    # Photometric interpretations.
    # (A 16-bit palette's colour map alone is 384 KiB: the Go tests build
    # one.)
    cmap = rng.integers(0, 65536, (3, 256), dtype=np.uint16)
    tf_case("tf-palette-u1", random_samples("u1", (1, 5, 7, 1)), channels=3,
            photometric="palette", colormap=cmap, byteorder=">")
    cmap = rng.integers(0, 65536, (3, 256), dtype=np.uint16)
    tf_case("tf-palette-u1-p3-zlib", random_samples("u1", (3, 5, 7, 1)), channels=3,
            photometric="palette", colormap=cmap, compression="zlib")
    for dt in ["u1", "u2", "u4"]:
        tf_case(f"tf-miniswhite-{dt}", random_samples(dt, (2, 5, 7, 1)), channels=0,
                photometric="miniswhite", byteorder=">" if dt == "u2" else "<")
    tf_case("tf-miniswhite-u1-c2", random_samples("u1", (1, 5, 7, 2)), channels=2,
            photometric="miniswhite", compression="zlib")
    # Reduced-resolution pages between and before full ones are skipped.
    tf_case("tf-subfiles-u2", random_samples("u2", (4, 6, 8, 1)), channels=0, subfile_pages=(0, 2))
    tf_case("tf-one-row-strips-f4", random_samples("f4", (1, 5, 7, 1)), channels=0, rowsperstrip=1)
    tf_case("tf-one-strip-u1-c3", random_samples("u1", (1, 5, 7, 3)), channels=3, rowsperstrip=5)

    # libtiff: LZW, PackBits and the floating-point predictor.
    lt = [
        ("u1", 0, 5, 1, 1, None, "<"), ("u1", 3, 5, 2, 1, None, ">"), ("u1", 4, 5, 2, 2, (16, 16), "<"),
        ("u2", 0, 5, 2, 1, (16, 16), ">"), ("u2", 2, 5, 1, 2, None, "<"), ("i1", 3, 5, 2, 1, None, "<"),
        ("i2", 0, 5, 2, 1, None, ">"), ("i4", 4, 5, 2, 1, None, "<"), ("u4", 0, 5, 2, 1, None, ">"),
        ("u8", 2, 5, 2, 1, None, "<"), ("i8", 0, 5, 2, 1, None, ">"),
        ("f2", 0, 5, 3, 1, None, "<"), ("f4", 0, 5, 3, 1, None, "<"), ("f4", 3, 8, 3, 1, None, ">"),
        ("f4", 4, 5, 3, 2, (16, 16), "<"), ("f8", 2, 5, 3, 1, None, "<"), ("f8", 0, 5, 3, 1, (16, 16), "<"),
        ("f4", 3, 8, 3, 1, None, "<"), ("f8", 0, 8, 3, 1, None, ">"), ("f2", 2, 8, 3, 2, None, ">"),
        ("u1", 3, 32773, 1, 1, None, "<"), ("i2", 2, 32773, 1, 1, (16, 16), ">"), ("f4", 0, 32773, 1, 2, None, "<"),
        ("u2", 4, 1, 1, 2, (16, 16), ">"),
    ]
    names = {1: "none", 5: "lzw", 8: "zlib", 32773: "packbits"}
    for i, (dt, ch, comp, pred, planar, tile, bo) in enumerate(lt):
        spp = max(ch, 1)
        pages = 2 if i % 2 and not tile else 1
        shape = (1, 17, 18, spp) if tile else (pages, 5, 7, spp)
        name = "-".join(x for x in ["lt", dt, f"c{ch}", f"p{pages}", names[comp],
                                    {1: "", 2: "pred", 3: "fpred"}[pred], "sep" if planar == 2 and spp > 1 else "",
                                    "tile" if tile else "strip", "be" if bo == ">" else "le"] if x)
        lt_case(name, random_samples(dt, shape), channels=ch, compression=comp, predictor=pred,
                planar=planar if spp > 1 else 1, tile=tile, byteorder=bo)
    # A long row of repetitive data: LZW codes widen to 12 bits and the
    # table fills and clears several times.
    long = np.tile(np.arange(4000, dtype=np.uint8) % 251, 3).reshape(1, 3, 4000, 1)
    long[0, 1, :, 0] = rng.integers(0, 4, 4000, dtype=np.uint8)
    lt_case("lt-u1-c0-p1-lzw-long-rows-le", long, channels=0, compression=5, rowsperstrip=3)

    # Files to refuse, with what the error must say.
    base = random_samples("u1", (5, 7, 4))
    tifffile.imwrite(os.path.join(REF, "err-cmyk.tif"), base, photometric="separated", metadata=None)
    error_case("err-cmyk", "unsupported", '"Separated (CMYK)" (5)')
    tifffile.imwrite(os.path.join(REF, "err-complex.tif"), random_samples("f4", (5, 7)).astype("c8"), metadata=None)
    error_case("err-complex", "unsupported", "complex IEEE floating point")
    tifffile.imwrite(os.path.join(REF, "err-bilevel.tif"), random_samples("u1", (5, 8)) > 127, metadata=None)
    error_case("err-bilevel", "unsupported", "BitsPerSample \"1\"")
    tifffile.imwrite(os.path.join(REF, "err-lzma.tif"), random_samples("u2", (5, 7)), compression="lzma", metadata=None)
    error_case("err-lzma", "unsupported", '"LZMA" (34925)')
    tifffile.imwrite(os.path.join(REF, "err-spp5.tif"), random_samples("u1", (5, 7, 5)),
                     photometric="minisblack", planarconfig="contig", metadata=None)
    error_case("err-spp5", "unsupported", 'samples per pixel "5"')
    inexact = random_samples("u8", (5, 7))
    inexact[2, 3] = 2 ** 53 + 1
    tifffile.imwrite(os.path.join(REF, "err-u8-inexact.tif"), inexact, metadata=None)
    # Beyond 2**53 (once refused, when 64-bit samples became float64): read exactly.
    fixtures["err-u8-inexact.tif"] = record(inexact.reshape(1, 5, 7, 1), 0, 1)
    inexact = random_samples("i8", (5, 7))
    inexact[4, 6] = -(2 ** 62) - 1
    tifffile.imwrite(os.path.join(REF, "err-i8-inexact.tif"), inexact, metadata=None, byteorder=">")
    fixtures["err-i8-inexact.tif"] = record(inexact.reshape(1, 5, 7, 1), 0, 1)
    with tifffile.TiffWriter(os.path.join(REF, "err-pages-differ.tif")) as tw:
        tw.write(random_samples("u1", (5, 7)), metadata=None)
        tw.write(random_samples("u1", (5, 7)), metadata=None)
        tw.write(random_samples("u1", (5, 6)), metadata=None)
    error_case("err-pages-differ", "unsupported", "IFD 2")
    tifffile.imwrite(os.path.join(REF, "err-miniswhite-f4.tif"), random_samples("f4", (5, 7)),
                     photometric="miniswhite", metadata=None)
    error_case("err-miniswhite-f4", "unsupported", "MinIsWhite")


# ------------------------------------------------------- golden files

def tifffile_decodes(tags):
    """Whether tifffile without imagecodecs decodes a file: no LZW, no
    floating-point predictor."""
    return tags["compression"] != 5 and tags["predictor"] != 3


def read_goldens():
    golden = {}
    for fname in sorted(os.listdir(GOLDEN)):
        if not fname.endswith(".tif"):
            continue
        path = os.path.join(GOLDEN, fname)
        pages = lt_read(path)
        arr = np.stack([a for a, _ in pages])
        tags = pages[0][1]
        assert all(t == tags for _, t in pages), fname + ": pages differ in tags"
        readers = ["libtiff"]
        if tifffile_decodes(tags):
            with tifffile.TiffFile(path) as tf:
                for pg, (want, _) in zip(tf.pages, pages):
                    assert same(pg.asarray().reshape(want.shape), want), fname + ": tifffile and libtiff differ"
                    assert pg.resolution == (1.0, 1.0), fname
                assert len(tf.pages) == len(pages)
            readers.append("tifffile")
        spp = arr.shape[3]
        rec = record(arr, spp if spp > 1 else 0, arr.shape[0])
        rec.update(tags)
        rec["readers"] = readers
        golden[fname] = rec
    return golden


def main():
    os.chdir(HERE)
    make_reference_files()
    with open("fixtures.json", "w") as f:
        json.dump(dict(sorted(fixtures.items())), f, indent=0)
        f.write("\n")
    if os.path.isdir(GOLDEN):
        golden = read_goldens()
        with open("golden.json", "w") as f:
            json.dump(golden, f, indent=0)
            f.write("\n")
        print(f"{len(fixtures)} reference files, {len(golden)} golden files read")
    else:
        print(f"{len(fixtures)} reference files; no golden/ yet (go test -run TestGolden -update)", file=sys.stderr)


if __name__ == "__main__":
    main()
