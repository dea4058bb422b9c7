#!/usr/bin/python3
# make_fixtures.py: writes the .npz fixtures of tests/test_npz.c with NumPy's own writer (and
# Python's zipfile, for a mix of stored and deflated entries), and good_mixed.expect: each array
# of good_mixed.npz as NumPy converts it to float32, as hex bit patterns, the test's independent
# answer. Run from this folder: /usr/bin/python3 make_fixtures.py (NumPy 1.24 made the committed ones).
import io
import zipfile

import numpy as np
from numpy.lib import format as npf


def npy(arr, version=None):
    b = io.BytesIO()
    npf.write_array(b, arr, version=version, allow_pickle=False)
    return b.getvalue()


def npy_raw(header, data):
    """A version 1.0 .npy with a header text of our own (padded the way NumPy pads it)."""
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data


def write_zip(path, entries):
    """entries: (name, bytes, deflate?) in order; force_zip64 as numpy.savez writes entries."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data, deflate in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            with z.open(info, "w", force_zip64=True) as f:
                f.write(data)


def good_arrays():
    rng = np.random.default_rng(51)
    yml = b"type: transformer\ndim-emb: 8\n" + b"\0" * 6
    return [
        ("a", np.array([[0.0, -0.0, 1.5], [1e-45, 3.4028235e38, -2.75]], dtype="<f4"), False, None),
        ("h", np.array([[0, -0.0, 1, -2], [6e-8, 65504, np.inf, -np.inf], [np.nan, 0.333, 1e-5, -7.5]],
                       dtype="<f2"), True, None),
        ("c", rng.standard_normal((2, 3, 4)).astype("<f4"), True, None),
        ("i8", np.array([-128, -1, 0, 1, 127], dtype="|i1"), False, None),
        ("u8", np.array([[0, 1], [128, 255]], dtype="|u1"), True, None),
        ("i32", np.array([-16777216, 0, 16777216], dtype="<i4"), False, None),
        ("s", np.array(2.5, dtype="<f4"), False, None),
        ("empty", np.zeros((0, 3), dtype="<f4"), False, None),
        ("v2", np.arange(6, dtype="<f4").reshape(3, 2) / 8, True, (2, 0)),
        ("layer/w", np.full((1, 4), 0.125, dtype="<f4"), False, None),
        ("bytes", np.frombuffer(b"ab\0c", dtype="|S1"), True, None),
        ("special:model.yml", np.frombuffer(yml, dtype="|i1"), False, None),
    ]


def main():
    arrs = good_arrays()
    write_zip("good_mixed.npz", [(n + ".npy", npy(a, v), d) for n, a, d, v in arrs])
    with open("good_mixed.expect", "w") as out:
        out.write("# name dtype shape(x-separated, '-' for a scalar) then float32 bits in hex\n")
        for n, a, _, _ in arrs:
            if n in ("special:model.yml", "bytes"):
                continue
            bits = a.astype("<f4").reshape(-1).view("<u4")
            shape = "x".join(str(d) for d in a.shape) or "-"
            out.write(" ".join([n, a.dtype.str, shape] + ["%08x" % b for b in bits]) + "\n")
    np.savez("good_savez.npz", w=np.arange(12, dtype="<f4").reshape(3, 4), b=np.ones((1, 4), "<f4"))

    f4 = np.arange(6, dtype="<f4").reshape(2, 3)
    data = f4.tobytes()
    bad = {
        "bad_fortran": [("a.npy", npy(np.asfortranarray(f4)), False)],
        "bad_bigendian": [("a.npy", npy(f4.astype(">f4")), False)],
        "bad_dtype": [("a.npy", npy(f4.astype("<f8")), True)],
        "bad_structured": [("a.npy", npy(np.zeros(2, dtype=[("x", "<f4")])), False)],
        "bad_shape": [("a.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (9, 3), }", data), False)],
        "bad_long": [("a.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", data), True)],
        "bad_header": [("a.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}", data), False)],
        "bad_notnpy": [("a.npy", npy(f4), False), ("readme.txt", b"hello\n", False)],
        "bad_dup": [("a.npy", npy(f4), False), ("b.npy", npy(f4), False), ("a.npy", npy(f4), True)],
        "bad_yml": [("special:model.yml.npy", npy(np.frombuffer(b"type: s2s\0x: 1\0", "|i1")), False)],
    }
    import warnings
    warnings.simplefilter("ignore")  # zipfile warns of the duplicate name, which is the point
    for name, entries in bad.items():
        write_zip(name + ".npz", entries)


main()
