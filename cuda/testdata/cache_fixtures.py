#!/usr/bin/python3
"""Independent oracle for the module cache's key and file format (cache.go).

Writes cache_keys.json (inputs and the SHA-256 key each must hash to) and
sample_cache_file.bin (a cache file holding a fake CUBIN under the first
key), from the format as documented, not from the Go code.

Rerun: /usr/bin/python3 cuda/testdata/cache_fixtures.py
"""
import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FORMAT = "ndconv-cuda-module-1"


def key(source, options, arch, nvrtc, driver):
    h = hashlib.sha256()

    def field(tag, value):
        data = value.encode()
        h.update(b"%s %d\n" % (tag.encode(), len(data)))
        h.update(data + b"\n")

    field("format", FORMAT)
    field("arch", arch)
    field("nvrtc", nvrtc)
    field("driver", str(driver))
    for o in options:
        field("option", o)
    field("source", source)
    return h.hexdigest()


def cache_file(key_hex, image):
    return (b"NDCUBIN\x01" + bytes.fromhex(key_hex) + struct.pack("<Q", len(image))
            + hashlib.sha256(image).digest() + image)


cases = [
    dict(source='extern "C" __global__ void k() {}', options=["--gpu-architecture=sm_90"],
         arch="sm_90", nvrtc="13.0", driver=13000),
    dict(source="", options=["--gpu-architecture=sm_80", "-DA=1", "-DB=2"],
         arch="sm_80", nvrtc="12.4", driver=12040),
    # the same text split differently between fields must hash differently
    dict(source="x\n", options=["--gpu-architecture=sm_90", "-DA=1\noption 1\nx"],
         arch="sm_90", nvrtc="13.0", driver=13000),
    dict(source="héllo ∑", options=["--gpu-architecture=sm_120", "--use_fast_math", "-DN=7"],
         arch="sm_120", nvrtc="13.1", driver=13010),
]
for c in cases:
    c["key"] = key(c["source"], c["options"], c["arch"], c["nvrtc"], c["driver"])

with open(os.path.join(HERE, "cache_keys.json"), "w") as f:
    json.dump(cases, f, indent=1, ensure_ascii=False)
    f.write("\n")

image = bytes(range(256)) * 3 + b"\x7fELF fake cubin"
with open(os.path.join(HERE, "sample_cache_file.bin"), "wb") as f:
    f.write(cache_file(cases[0]["key"], image))
with open(os.path.join(HERE, "sample_cache_image.bin"), "wb") as f:
    f.write(image)
