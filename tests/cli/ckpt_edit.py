#!/usr/bin/env python3
"""ckpt_edit.py IN OUT EDIT...: a copy of a checkpoint (a safetensors file) with its train_state or
tensors changed, for the hostile-checkpoint tests. The checksums are dropped (or, with --recrc,
recomputed as a forger would), so that what the copy meets is the reader's field validation.
EDIT is KEY=JSON (a train_state field; JSON 'DEL' removes it), TENSOR[I]=VALUE (one element),
TENSOR:swap=I,J (two elements exchanged), or TENSOR*=FACTOR (every element scaled; TENSOR '*':
every F32 tensor)."""
import json, math, struct, sys, zlib

FMT = {"F32": "<f", "F64": "<d", "I32": "<i", "I64": "<q"}


def crc_table(meta, hdr, data):
    c = 0
    for k in sorted(meta):
        if k != "crc32":
            c = zlib.crc32((k + "\0").encode() + (meta[k] + "\0").encode(), c)
    t = {"__metadata__": "%08x" % c}
    for name, e in hdr.items():
        d = zlib.crc32(e["dtype"].encode() + b"\0" + bytes([len(e["shape"])]))
        for s in e["shape"]:
            d = zlib.crc32(struct.pack("<Q", s), d)
        b, en = e["data_offsets"]
        t[name] = "%08x" % zlib.crc32(data[b:en], d)
    return json.dumps(t, separators=(",", ":"))


def main():
    src, dst, *edits = sys.argv[1:]
    recrc = "--recrc" in edits
    edits = [e for e in edits if e != "--recrc"]
    raw = open(src, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    meta = hdr.pop("__metadata__")
    data = bytearray(raw[8 + n:])
    state = json.loads(meta["train_state"])
    for e in edits:
        if "*=" in e:
            name, fac = e.split("*=")
            for t in (hdr if name == "*" else [name]):
                if hdr[t]["dtype"] == "F32":
                    b, en = hdr[t]["data_offsets"]
                    vals = struct.unpack("<%df" % ((en - b) // 4), data[b:en])
                    data[b:en] = struct.pack("<%df" % len(vals), *[v * float(fac) for v in vals])
        elif ":swap=" in e:
            name, ij = e.split(":swap=")
            i, j = map(int, ij.split(","))
            f = FMT[hdr[name]["dtype"]]
            sz, b = struct.calcsize(f), hdr[name]["data_offsets"][0]
            a, c = data[b + i * sz:b + (i + 1) * sz], data[b + j * sz:b + (j + 1) * sz]
            data[b + i * sz:b + (i + 1) * sz], data[b + j * sz:b + (j + 1) * sz] = c, a
        elif "[" in e.split("=")[0]:
            lhs, v = e.split("=", 1)
            name, i = lhs[:-1].split("[")
            f = FMT[hdr[name]["dtype"]]
            sz, b = struct.calcsize(f), hdr[name]["data_offsets"][0] + int(i) * struct.calcsize(f)
            val = float(v) if f in ("<f", "<d") else int(v)
            data[b:b + sz] = struct.pack(f, val)
        else:
            k, v = e.split("=", 1)
            if v == "DEL":
                state.pop(k, None)
            else:
                state[k] = json.loads(v)
    meta["train_state"] = json.dumps(state, separators=(",", ":"))
    meta.pop("crc32", None)
    if recrc:
        meta["crc32"] = crc_table(meta, hdr, data)
    h = json.dumps(dict([("__metadata__", meta)] + list(hdr.items())), separators=(",", ":"))
    h += " " * ((8 - (8 + len(h)) % 8) % 8)
    open(dst, "wb").write(struct.pack("<Q", len(h)) + h.encode() + bytes(data))


if __name__ == "__main__":  # spm_meta.py imports crc_table
    main()
