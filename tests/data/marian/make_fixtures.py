"""make_fixtures.py: tiny Marian-format models (an .npz with special:model.yml, as marian-dev
writes them: float32 [in, out] matrices, [1, n] biases) with random weights and a joint vocabulary,
as the fuzz harness's seeds (fuzz/corpus/marian/: the vocabulary .yml, a NUL, the .npz), which
tests/cli/marian_import.sh also converts and checks tensor by tensor (marian_map.py). Written
with the standard library alone (no NumPy): `python3 tests/data/marian/make_fixtures.py`."""
import io
import random
import struct
import zipfile

D, F, V = 4, 8, 6
WORDS = ["</s>", "<unk>", "a", "b", "\"&\"", "c"]


def npy(shape, data, dtype="<f4"):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (dtype, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    head = head.ljust(64 * ((len(head) + 11) // 64 + 1) - 11) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + data


def mat(rng, r, c):
    return npy((r, c), struct.pack("<%df" % (r * c), *[rng.uniform(-0.5, 0.5) for _ in range(r * c)]))


def params(rng, pre, ssru, untied):
    p, suf = {"decoder_ff_logit_out_b": mat(rng, 1, V)}, "_pre" if pre else ""
    if untied:  # the output matrix saved transposed, as Marian saves it ([V, D], name ending Wt)
        p["encoder_Wemb"], p["decoder_Wemb"], p["decoder_ff_logit_out_Wt"] = mat(rng, V, D), mat(rng, V, D), mat(rng, V, D)
    else:
        p["Wemb"] = mat(rng, V, D)
    for side in ("encoder", "decoder"):
        blocks = ["self", "ffn"] if side == "encoder" else (["rnn"] if ssru else ["self"]) + ["context", "ffn"]
        for b in blocks:
            x = f"{side}_l1_{b}"
            if b in ("self", "context"):
                for w in "qkvo":
                    p[f"{x}_W{w}"], p[f"{x}_b{w}"] = mat(rng, D, D), mat(rng, 1, D)
                ln = f"{x}_Wo_ln"
            elif b == "rnn":
                p[f"{x}_W"], p[f"{x}_Wf"], p[f"{x}_bf"] = mat(rng, D, D), mat(rng, D, D), mat(rng, 1, D)
                ln = f"{x}_ln" if pre else f"{x}_ffn_ln"
            else:
                p[f"{x}_W1"], p[f"{x}_b1"], p[f"{x}_W2"], p[f"{x}_b2"] = mat(rng, D, F), mat(rng, 1, F), mat(rng, F, D), mat(rng, 1, D)
                ln = f"{x}_ffn_ln"
            p[f"{ln}_scale{suf}"], p[f"{ln}_bias{suf}"] = mat(rng, 1, D), mat(rng, 1, D)
        if pre:
            p[f"{side}_top_ln_scale"], p[f"{side}_top_ln_bias"] = mat(rng, 1, D), mat(rng, 1, D)
    return p


def model(seed, pre, ssru, untied=0):
    rng = random.Random(seed)
    empty = '""'
    yml = (f"type: transformer\ndim-emb: {D}\nenc-depth: 1\ndec-depth: 1\ntransformer-heads: 2\ntransformer-dim-ffn: {F}\n"
           f"transformer-ffn-activation: swish\ntied-embeddings-all: {'false' if untied else 'true'}\ndim-vocabs:\n  - {V}\n  - {V}\n"
           f"transformer-preprocess: {'n' if pre else empty}\ntransformer-postprocess: {'da' if pre else 'dan'}\n"
           f"transformer-postprocess-top: {'n' if pre else empty}\ntransformer-tied-layers:\n  []\n"
           f"transformer-decoder-autoreg: {'rnn' if ssru else 'self-attention'}\ndec-cell: {'ssru' if ssru else 'gru'}\n"
           "transformer-guided-alignment-layer: last\n").encode()
    yml += b"\0" * (64 - len(yml) % 64)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in sorted(params(rng, pre, ssru, untied).items()):
            z.writestr(name + ".npy", data)
        z.writestr("special:model.yml.npy", npy((len(yml),), yml, "|i1"))
    return buf.getvalue()


vocab = "".join(f"{w}: {i}\n" for i, w in enumerate(WORDS)).encode()
for name, seed, pre, ssru, untied in (("post", 1, 0, 0, 0), ("pre", 2, 1, 0, 0), ("ssru", 3, 0, 1, 0), ("untied", 4, 0, 0, 1)):
    with open(f"fuzz/corpus/marian/{name}.bin", "wb") as f:
        f.write(vocab + b"\0" + model(seed, pre, ssru, untied))
