#!/usr/bin/env python3
"""text_meta.py: a model file's metadata entries, for the raw-text word model tests.
  text_meta.py diff A B            prints the metadata keys whose values differ (or that one file
                                   lacks), then "tensors same" or "tensors differ"
  text_meta.py get MODEL KEY       prints the entry (nothing when absent)
  text_meta.py set MODEL KEY VALUE OUT
                                   a copy with the entry set to VALUE (DEL removes it) and the
                                   checksums recomputed, as a forger would: only the model reader
                                   can notice what is wrong"""
import json, os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ckpt_edit import crc_table  # noqa: E402
from spm_meta import read  # noqa: E402


def main():
    cmd, path = sys.argv[1:3]
    hdr, meta, data = read(path)
    if cmd == "diff":
        hb, mb, db = read(sys.argv[3])
        keys = sorted(k for k in set(meta) | set(mb) if meta.get(k) != mb.get(k))
        print(" ".join(keys))
        print("tensors same" if hdr == hb and data == db else "tensors differ")
    elif cmd == "get":
        if sys.argv[3] in meta:
            print(meta[sys.argv[3]])
    elif cmd == "set":
        key, val, out = sys.argv[3:6]
        if val == "DEL":
            meta.pop(key, None)
        else:
            meta[key] = val
        meta["crc32"] = crc_table(meta, hdr, data)
        h = json.dumps(dict([("__metadata__", meta)] + list(hdr.items())), separators=(",", ":"))
        h += " " * ((8 - (8 + len(h)) % 8) % 8)
        open(out, "wb").write(struct.pack("<Q", len(h)) + h.encode() + data)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
