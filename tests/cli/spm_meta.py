#!/usr/bin/env python3
"""spm_meta.py: the SentencePiece models inside an nmt model file, for the subword tests.
  spm_meta.py extract MODEL SIDE OUT   writes the embedded model of SIDE (src or tgt; a joint
                                       model's for both) to OUT, as spm_encode reads it
  spm_meta.py damage MODEL MODE OUT    a copy whose source model is damaged with the file's
                                       checksums recomputed, as a forger would, so that only the
                                       model reader can notice: MODE garbage (valid base64 of bytes
                                       that are no protobuf) or base64 (not base64 at all)"""
import base64, json, os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ckpt_edit import crc_table  # noqa: E402


def read(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    return hdr, hdr.pop("__metadata__"), raw[8 + n:]


def main():
    cmd, path, arg, out = sys.argv[1:5]
    hdr, meta, data = read(path)
    sw = json.loads(meta["subwords"])
    if cmd == "extract":
        key = "tgt" if arg == "tgt" and not sw["joint"] else "src"
        open(out, "wb").write(base64.b64decode(sw[key]))
        return
    sw["src"] = base64.b64encode(b"\x07\xff these bytes are no SentencePiece model").decode() \
        if arg == "garbage" else "not base64 at all!"
    meta["subwords"] = json.dumps(sw, separators=(",", ":"))
    meta["crc32"] = crc_table(meta, hdr, data)
    h = json.dumps(dict([("__metadata__", meta)] + list(hdr.items())), separators=(",", ":"))
    h += " " * ((8 - (8 + len(h)) % 8) % 8)
    open(out, "wb").write(struct.pack("<Q", len(h)) + h.encode() + data)


if __name__ == "__main__":  # text_meta.py imports read
    main()
