#!/usr/bin/python3
"""Writes the Zarr fixtures the zarr package's tests read.

Run from this directory with Debian's python3-zarr (zarr-python 2.13) and
python3-numcodecs: /usr/bin/python3 gen.py. It rewrites v2/ (arrays written
by zarr-python itself), v3/ (Zarr v3 arrays written here by hand from the
v3 spec: zarr.json and chunks encoded with numcodecs' codecs, shards with a
CRC-32C computed here) and manifest.json, which lists each array with the
.npy of what it must read as.
"""
import json
import os
import shutil
import struct

import numpy as np
import numcodecs
import zarr
from numcodecs import Blosc, GZip, Zlib, Zstd

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(30)
manifest = []


def data(shape, dtype):
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == 'b':
        return rng.integers(0, 2, n).astype(dt).reshape(shape)
    if dt.kind in 'iu':
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        a = rng.integers(lo, hi, n, endpoint=True).astype(dt)
        a.flat[0], a.flat[-1] = info.min, info.max
        return a.reshape(shape)
    if dt.kind == 'c':
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt).reshape(shape)
    a = (rng.standard_normal(n) * 100).astype(dt)
    return a.reshape(shape)


def record(name, root, path, expect, fmt):
    name = 'v%d_%s' % (fmt, name)
    if expect.dtype == np.bool_:
        expect = expect.astype(np.uint8)  # bool reads as uint8 0 or 1
    np.save(os.path.join(HERE, 'npy', name + '.npy'), np.ascontiguousarray(expect).astype(expect.dtype.newbyteorder('=')))
    manifest.append({'name': name, 'root': root, 'path': path, 'npy': 'npy/' + name + '.npy', 'format': fmt})


def v2(name, shape, chunks, dtype, compressor, order='C', sep='.', fill=0, region=None, path=''):
    root = 'v2/' + name + '.zarr'
    store = zarr.DirectoryStore(os.path.join(HERE, root), dimension_separator=sep)
    z = zarr.open_array(store, mode='w', shape=shape, chunks=chunks, dtype=dtype, compressor=compressor,
                        order=order, fill_value=fill, path=path or None, write_empty_chunks=False)
    a = data(shape, dtype)
    if region is None:
        z[...] = a
        expect = a
    else:
        # Only part written: the rest reads as the fill value.
        expect = np.full(shape, fill if fill is not None else 0, dtype=z.dtype)
        expect[region] = a[region]
        z[region] = a[region]
    back = z[...]
    assert np.array_equal(back, expect, equal_nan=True), name
    record(name, root, path, expect, 2)


def gen_v2():
    shape, chunks = (5, 7, 6), (2, 3, 4)
    # Every dtype, in both byte orders where it has one.
    for i, dt in enumerate(['|b1', '|u1', '|i1', '<u2', '>i2', '<u4', '>i4', '<i8', '>u8',
                            '<f2', '>f4', '<f4', '>f8', '<c8', '>c16']):
        comp = [Zstd(level=3), GZip(level=5), Zlib(level=1), Blosc('lz4', 5, Blosc.SHUFFLE), None][i % 5]
        v2('dtype_' + dt.replace('<', 'le').replace('>', 'be').replace('|', ''), shape, chunks, dt, comp)
    # Every blosc compressor with every shuffle.
    for cname in ['lz4', 'lz4hc', 'zstd', 'zlib', 'blosclz']:
        for sh, shname in [(Blosc.NOSHUFFLE, 'noshuffle'), (Blosc.SHUFFLE, 'shuffle'), (Blosc.BITSHUFFLE, 'bitshuffle')]:
            v2('blosc_%s_%s' % (cname, shname), (20, 30), (12, 16), '<i4', Blosc(cname, 5, sh))
    # Several blocks per chunk, the last shorter, and elements not a
    # multiple of 8 (bit shuffle's leftovers).
    for sh, shname in [(Blosc.SHUFFLE, 'shuffle'), (Blosc.BITSHUFFLE, 'bitshuffle')]:
        for cname in ['lz4', 'blosclz', 'zstd']:
            v2('blosc_blocks_%s_%s' % (cname, shname), (40, 27), (20, 27), '<i4', Blosc(cname, 5, sh, blocksize=256))
    # Compressible data through blosclz (matches, long runs, far distances).
    name = 'blosc_blosclz_runs'
    root = 'v2/' + name + '.zarr'
    z = zarr.open_array(os.path.join(HERE, root), mode='w', shape=(3000,), chunks=(3000,), dtype='<u2',
                        compressor=Blosc('blosclz', 9, Blosc.NOSHUFFLE))
    a = (np.arange(3000) // 37 % 5 * 1000 + np.arange(3000) % 3).astype('<u2')
    a[2000:2100] = rng.integers(0, 65535, 100)
    a[2900:] = a[100:200]
    z[...] = a
    record(name, root, '', a, 2)
    v2('order_F', shape, chunks, '<f4', Zstd(level=1), order='F')
    v2('order_F_blosc', (6, 10), (4, 3), '>i2', Blosc('zstd', 3, Blosc.BITSHUFFLE), order='F')
    v2('sep_slash', shape, chunks, '<u2', GZip(), sep='/')
    v2('fill_nan_missing', shape, chunks, '<f4', Zstd(), fill=np.nan, region=np.s_[1:3, 2:7, :])
    v2('fill_inf_missing', shape, chunks, '>f8', None, fill=np.inf, region=np.s_[0:2, 0:3, 0:4])
    v2('fill_int_missing', shape, chunks, '<i2', Zlib(), fill=-7, region=np.s_[3:, :, 4:])
    v2('fill_none', shape, chunks, '<u4', None, fill=None)
    v2('nested', shape, chunks, '<f4', Zstd(), path='g/h/arr')
    v2('edge_chunks', (13, 1, 17), (4, 1, 5), '<i8', Blosc('lz4', 5, Blosc.SHUFFLE))
    v2('zero_d', (), (), '<f8', None)
    v2('empty_axis', (4, 0, 3), (2, 2, 2), '<f4', None)
    # OME-Zarr 0.4: a group of two levels.
    root = 'v2/ome04.zarr'
    g = zarr.open_group(os.path.join(HERE, root), mode='w')
    a0 = data((4, 6, 8), '<u2')
    g.create_dataset('0', data=a0, chunks=(2, 3, 4), compressor=Zstd())
    g.create_dataset('1', data=a0[::2, ::2, ::2], chunks=(2, 3, 4), compressor=Zstd())
    g.attrs['multiscales'] = [{
        'version': '0.4', 'name': 'img',
        'axes': [{'name': 'z', 'type': 'space', 'unit': 'micrometer'},
                 {'name': 'y', 'type': 'space', 'unit': 'micrometer'},
                 {'name': 'x', 'type': 'space', 'unit': 'micrometer'}],
        'datasets': [
            {'path': '0', 'coordinateTransformations': [{'type': 'scale', 'scale': [2.0, 0.5, 0.5]},
                                                        {'type': 'translation', 'translation': [10.0, 0.0, -3.0]}]},
            {'path': '1', 'coordinateTransformations': [{'type': 'scale', 'scale': [4.0, 1.0, 1.0]}]}],
    }]
    record('ome04_level0', root, '', a0, 2)
    record('ome04_level1', root, '1', a0[::2, ::2, ::2], 2)


# ---- Zarr v3, by hand ----

def crc32c(b):
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    crc = 0xFFFFFFFF
    for x in b:
        crc = table[(crc ^ x) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def fill_json(v, dt):
    if dt.kind == 'c':
        return [fill_json(v.real, np.dtype('f8')), fill_json(v.imag, np.dtype('f8'))]
    if dt.kind == 'f':
        if np.isnan(v):
            return 'NaN'
        if np.isinf(v):
            return 'Infinity' if v > 0 else '-Infinity'
        return float(v)
    if dt.kind == 'b':
        return bool(v)
    return int(v)


def encode_chunk(chunk, codecs):
    """Encodes one chunk (already padded) with a v3 codec list of dicts."""
    arr, raw = chunk, None
    for c in codecs:
        name, cfg = c['name'], c.get('configuration', {})
        if name == 'transpose':
            arr = np.transpose(arr, cfg['order'])
        elif name == 'bytes':
            order = '>' if cfg.get('endian') == 'big' else '<'
            raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder(order) if arr.dtype.itemsize > 1 else arr.dtype).tobytes()
        elif name == 'gzip':
            raw = GZip(cfg['level']).encode(raw)
        elif name == 'zstd':
            raw = Zstd(cfg['level']).encode(raw)
        elif name == 'blosc':
            sh = {'noshuffle': 0, 'shuffle': 1, 'bitshuffle': 2}[cfg['shuffle']]
            raw = Blosc(cfg['cname'], cfg['clevel'], sh, cfg.get('blocksize', 0)).encode(raw)
        elif name == 'crc32c':
            raw = bytes(raw) + struct.pack('<I', crc32c(bytes(raw)))
        else:
            raise ValueError(name)
    return bytes(raw)


def padded(a, lo, shape, fill):
    out = np.full(shape, fill, dtype=a.dtype)
    sl = tuple(slice(l, min(l + s, n)) for l, s, n in zip(lo, shape, a.shape))
    part = a[sl]
    out[tuple(slice(0, p) for p in part.shape)] = part
    return out


def key_of(idx, enc, sep):
    if enc == 'default':
        return sep.join(['c'] + [str(i) for i in idx])
    return sep.join(str(i) for i in idx) if idx else '0'


def v3(name, a, chunk, codecs, fill=0, enc='default', sep='/', shard=None, index_codecs=None,
       index_location='end', skip=(), skip_inner=(), path='', attrs=None, root=None, record_it=True):
    """Writes array a as Zarr v3. With shard, chunk is the shard shape and
    shard the inner chunk shape. skip: grid indices of shards or chunks not
    written (they read as fill); skip_inner: (shard index, inner index)
    left out of the index."""
    dt = a.dtype
    root = root or 'v3/' + name + '.zarr'
    base = os.path.join(HERE, root, path)
    os.makedirs(base, exist_ok=True)
    if index_codecs is None:
        index_codecs = [{'name': 'bytes', 'configuration': {'endian': 'little'}}, {'name': 'crc32c'}]
    top = codecs
    if shard:
        top = [{'name': 'sharding_indexed', 'configuration': {'chunk_shape': list(shard), 'codecs': codecs,
                'index_codecs': index_codecs, 'index_location': index_location}}]
    meta = {'zarr_format': 3, 'node_type': 'array', 'shape': list(a.shape),
            'data_type': {'|b1': 'bool'}.get(dt.str, dt.name),
            'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': list(chunk)}},
            'chunk_key_encoding': {'name': enc, 'configuration': {'separator': sep}},
            'fill_value': fill_json(fill, dt) if not isinstance(fill, str) else fill,
            'codecs': top, 'attributes': attrs or {}}
    fillv = {'NaN': np.nan, 'Infinity': np.inf, '-Infinity': -np.inf}.get(fill, fill) if isinstance(fill, str) else fill
    if isinstance(fill, str) and fill.startswith('0x'):
        fillv = np.frombuffer(bytes.fromhex(fill[2:])[::-1], dtype=dt.newbyteorder('<'))[0]
    with open(os.path.join(base, 'zarr.json'), 'w') as f:
        json.dump(meta, f, indent=2)
    expect = a.copy()
    grid = [-(-n // c) for n, c in zip(a.shape, chunk)]
    for idx in np.ndindex(*grid):
        lo = [i * c for i, c in zip(idx, chunk)]
        sl = tuple(slice(l, l + c) for l, c in zip(lo, chunk))
        if idx in skip:
            expect[sl] = fillv
            continue
        cell = padded(a, lo, chunk, fillv)
        if not shard:
            blob = encode_chunk(cell, codecs)
        else:
            counts = [c // s for c, s in zip(chunk, shard)]
            body, index = b'', []
            n = int(np.prod(counts))
            ilen = 16 * n + 4 * sum(1 for c in index_codecs if c['name'] == 'crc32c')
            base_off = ilen if index_location == 'start' else 0
            for j, inner in enumerate(np.ndindex(*counts)):
                ilo = [i * s for i, s in zip(inner, shard)]
                if (idx, inner) in skip_inner:
                    index += [2**64 - 1, 2**64 - 1]
                    isl = tuple(slice(l + il, l + il + s) for l, il, s in zip(lo, ilo, shard))
                    expect[isl] = fillv
                    continue
                c = cell[tuple(slice(l, l + s) for l, s in zip(ilo, shard))]
                enc_ = encode_chunk(c, codecs)
                index += [base_off + len(body), len(enc_)]
                body += enc_
            iorder = '>' if index_codecs[0].get('configuration', {}).get('endian') == 'big' else '<'
            ib = np.array(index, dtype=iorder + 'u8').tobytes()
            for c in index_codecs[1:]:
                assert c['name'] == 'crc32c'
                ib += struct.pack('<I', crc32c(ib))
            blob = ib + body if index_location == 'start' else body + ib
        k = os.path.join(base, *key_of(list(idx), enc, sep).split('/'))
        os.makedirs(os.path.dirname(k), exist_ok=True)
        with open(k, 'wb') as f:
            f.write(blob)
    if record_it:
        record(name, root, path, expect, 3)
    return expect


def by(endian):
    return {'name': 'bytes', 'configuration': {'endian': endian}}


def gen_v3():
    shape = (5, 7, 6)
    for i, dt in enumerate(['u1', 'i1', 'u2', 'i2', 'u4', 'i4', 'u8', 'i8', 'f2', 'f4', 'f8', 'c8', 'c16', '?']):
        endian = ['little', 'big'][i % 2]
        comp = [[{'name': 'zstd', 'configuration': {'level': 1, 'checksum': False}}],
                [{'name': 'gzip', 'configuration': {'level': 5}}],
                [{'name': 'blosc', 'configuration': {'cname': 'lz4', 'clevel': 5, 'shuffle': 'shuffle',
                                                     'typesize': np.dtype(dt).itemsize, 'blocksize': 0}}],
                []][i % 4]
        v3('dtype_' + np.dtype(dt).name, data(shape, dt), (2, 3, 4), [by(endian)] + comp)
    v3('transpose_big_gzip_v2keys', data(shape, 'f4'), (2, 3, 4),
       [{'name': 'transpose', 'configuration': {'order': [2, 0, 1]}}, by('big'),
        {'name': 'gzip', 'configuration': {'level': 1}}], enc='v2', sep='.')
    v3('dot_separator', data(shape, 'i2'), (3, 3, 3), [by('little')], sep='.')
    v3('fill_nan_missing', data(shape, 'f4'), (2, 3, 4), [by('little'), {'name': 'zstd', 'configuration': {'level': 0}}],
       fill='NaN', skip={(0, 0, 0), (2, 1, 1)})
    v3('fill_neginf_missing', data(shape, 'f8'), (2, 3, 4), [by('big')], fill='-Infinity', skip={(1, 2, 0)})
    v3('fill_hex_missing', data(shape, 'f4'), (2, 3, 4), [by('little')], fill='0x7fc00001', skip={(1, 1, 1)})
    v3('fill_complex_missing', data(shape, 'c8'), (2, 3, 4), [by('little')], fill=np.complex64(1 + 2j), skip={(0, 1, 0)})
    v3('fill_int_missing', data(shape, 'i4'), (2, 3, 4), [by('little'), {'name': 'crc32c'}], fill=-5, skip={(2, 2, 1)})
    # Sharded.
    v3('shard_zstd', data((10, 12, 9), 'u2'), (4, 6, 9), [by('little'), {'name': 'zstd', 'configuration': {'level': 3, 'checksum': True}}],
       shard=(2, 3, 3), skip={(1, 1, 0)}, skip_inner={((0, 0, 0), (1, 0, 2)), ((2, 1, 0), (0, 1, 1))})
    v3('shard_blosc_start_big', data((8, 8), 'f8'), (4, 8),
       [by('big'), {'name': 'blosc', 'configuration': {'cname': 'zstd', 'clevel': 3, 'shuffle': 'bitshuffle', 'typesize': 8, 'blocksize': 0}}],
       shard=(2, 4), index_location='start', fill=-1.5, skip_inner={((1, 0), (0, 1))})
    v3('shard_transpose_inner_crc', data((6, 10), 'i8'), (6, 5),
       [{'name': 'transpose', 'configuration': {'order': [1, 0]}}, by('little'), {'name': 'crc32c'}],
       shard=(3, 5), index_codecs=[by('big')])
    v3('shard_edge', data((7, 11), 'f4'), (4, 8), [by('little'), {'name': 'gzip', 'configuration': {'level': 1}}], shard=(2, 4))
    # OME-Zarr 0.5.
    root = 'v3/ome05.zarr'
    os.makedirs(os.path.join(HERE, root), exist_ok=True)
    ms = {'ome': {'version': '0.5', 'multiscales': [{
        'axes': [{'name': 'c', 'type': 'channel'}, {'name': 'y', 'type': 'space', 'unit': 'nanometer'},
                 {'name': 'x', 'type': 'space', 'unit': 'nanometer'}],
        'datasets': [{'path': 's0', 'coordinateTransformations': [{'type': 'scale', 'scale': [1.0, 4.0, 4.0]},
                                                                  {'type': 'translation', 'translation': [0.0, 2.0, 2.0]}]}],
        'coordinateTransformations': [{'type': 'scale', 'scale': [1.0, 1.0, 1.0]}]}]}}
    with open(os.path.join(HERE, root, 'zarr.json'), 'w') as f:
        json.dump({'zarr_format': 3, 'node_type': 'group', 'attributes': ms}, f, indent=2)
    a = data((2, 9, 10), 'f4')
    v3('ome05_s0', a, (2, 8, 8), [by('little'), {'name': 'zstd', 'configuration': {'level': 1}}], shard=(1, 4, 4),
       root=root, path='s0', record_it=False)
    record('ome05_s0', root, '', a, 3)


def main():
    for d in ['v2', 'v3', 'npy']:
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
        os.makedirs(os.path.join(HERE, d))
    gen_v2()
    gen_v3()
    with open(os.path.join(HERE, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
    print(len(manifest), 'arrays; zarr', zarr.__version__, 'numcodecs', numcodecs.__version__)


if __name__ == '__main__':
    main()
