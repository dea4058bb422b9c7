"""marian_map.py INPUT MODEL: a fuzz seed of fuzz/corpus/marian (a vocabulary .yml, a NUL, a Marian
.npz) against the nmt model `nmt convert` made of it: every nmt tensor, read from the model file
(safetensors), must equal bit for bit the Marian arrays that docs/OPUS-MT.md and the Marian
test vectors' README name for it (fused projections side by side, decoder_ff_logit_out_Wt
transposed), and every Marian array must be used. Written apart from src/io/marian.c, with the
standard library alone. Prints one line; exits 1 on any difference."""
import io
import json
import struct
import sys
import zipfile


def npz_arrays(data):
    out = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            raw = z.read(name)
            hlen = struct.unpack("<H", raw[8:10])[0]
            head = raw[10:10 + hlen].decode()
            shape = tuple(int(x) for x in head.split("(")[1].split(")")[0].split(",") if x.strip())
            if "<f4" in head:
                n = 1
                for x in shape:
                    n *= x
                vals = struct.unpack("<%df" % n, raw[10 + hlen:10 + hlen + 4 * n])
                rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
                out[name[:-4]] = [list(vals[r * cols:(r + 1) * cols]) for r in range(rows)]
    return out


def nmt_tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    base, out = 8 + n, {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        vals = struct.unpack("<%df" % ((b - a) // 4), raw[base + a:base + b])
        cols = t["shape"][-1]
        out[name] = [list(vals[r * cols:(r + 1) * cols]) for r in range(len(vals) // cols)]
    return out, json.loads(head["__metadata__"]["config"])


def hcat(*ms):
    return [sum((m[r] for m in ms), []) for r in range(len(ms[0]))]


def expected(m, cfg):
    tf, e = cfg["transformer"], {}
    pre = "" if tf["norm"] == "post" else "_pre"
    if tf.get("tied_all"):
        e["Et"] = m["Wemb"]
    else:
        e["Es"], e["Et"] = m["encoder_Wemb"], m["decoder_Wemb"]
        if not cfg.get("tied_embeddings"):
            wt = m["decoder_ff_logit_out_Wt"]
            e["out_W"] = [list(col) for col in zip(*wt)]
    e["out_bias"] = m["decoder_ff_logit_out_b"]
    for side, mside, depth in (("enc", "encoder", tf["enc_depth"]), ("dec", "decoder", tf["dec_depth"])):
        for n in range(1, depth + 1):
            x, y = f"{side}_l{n}_", f"{mside}_l{n}_"
            if side == "dec" and tf.get("ssru"):
                e[x + "ssru_W"] = hcat(m[y + "rnn_W"], m[y + "rnn_Wf"])
                e[x + "ssru_bf"] = m[y + "rnn_bf"]
                for p in ("scale", "bias"):
                    e[x + "ssru_ln_" + p] = m[y + ("rnn_ln_" + p + "_pre" if pre else "rnn_ffn_ln_" + p)]
            else:
                e[x + "self_Wqkv"] = hcat(m[y + "self_Wq"], m[y + "self_Wk"], m[y + "self_Wv"])
                e[x + "self_bqkv"] = hcat(m[y + "self_bq"], m[y + "self_bk"], m[y + "self_bv"])
                e[x + "self_Wo"], e[x + "self_bo"] = m[y + "self_Wo"], m[y + "self_bo"]
                for p in ("scale", "bias"):
                    e[x + "self_ln_" + p] = m[y + "self_Wo_ln_" + p + pre]
            for k in ("W1", "b1", "W2", "b2"):
                e[x + "ffn_" + k] = m[y + "ffn_" + k]
            for p in ("scale", "bias"):
                e[x + "ffn_ln_" + p] = m[y + "ffn_ffn_ln_" + p + pre]
            if side == "dec":
                e[x + "ctx_Wq"], e[x + "ctx_bq"] = m[y + "context_Wq"], m[y + "context_bq"]
                e[x + "ctx_Wkv"] = hcat(m[y + "context_Wk"], m[y + "context_Wv"])
                e[x + "ctx_bkv"] = hcat(m[y + "context_bk"], m[y + "context_bv"])
                e[x + "ctx_Wo"], e[x + "ctx_bo"] = m[y + "context_Wo"], m[y + "context_bo"]
                for p in ("scale", "bias"):
                    e[x + "ctx_ln_" + p] = m[y + "context_Wo_ln_" + p + pre]
        if pre:
            for p in ("scale", "bias"):
                e[f"{side}_top_ln_{p}"] = m[f"{mside}_top_ln_{p}"]
    return e


class Used(dict):
    """the arrays read"""
    seen = set()

    def __getitem__(self, k):
        self.seen.add(k)
        return dict.__getitem__(self, k)


data = open(sys.argv[1], "rb").read()
marian = Used(npz_arrays(data[data.index(b"\0") + 1:]))
mine, cfg = nmt_tensors(sys.argv[2])
want = expected(marian, cfg)
bad = sorted(set(want) ^ set(mine)) + [k for k in want if k in mine and want[k] != mine[k]]
bad += ["unused " + k for k in sorted(set(marian) - Used.seen)]
print(f"{sys.argv[1]}: {len(mine)} tensors, {len(bad)} not as mapped {bad[:5]}")
sys.exit(1 if bad else 0)
