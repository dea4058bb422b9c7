"""test_nmt.py: the Python package (python/) against the nmt program on the same models and input:
n-best lists and scores (1e-6, what the program prints), forced-alignment attention to the bit,
scores of nmt score, hard links, text translation, BLEU and chrF of nmt bleu, the Moses tokenizer
of nmt tokenize, model tensors against the file parsed here as safetensors, averaging against nmt
average, training from a dict against nmt train -c (the same model), and the option names against
nmt train --help. Also: two threads sharing one Translator, bad arguments raising, and 10,000 calls
not growing the process; and on a Transformer (TransformerDecode): n-best lists under each ranking
rule, forced scores, attention, links, UNK replacement, draws, prefixes and constraints, ensembles. Run
by tests/cli/python.sh with NMT_BIN, NMT_SHARED and NMT_TEST_DIR set; prints "python: P passed, F
failed".
"""
import json
import os
import re
import struct
import subprocess
import sys
import threading
import unittest

import nmt

BIN = os.path.abspath(os.environ.get("NMT_BIN", "bin/nmt"))
SHARED = os.environ.get("NMT_SHARED", "../shared")
DIR = os.environ["NMT_TEST_DIR"]
TOK = os.path.join(SHARED, "data", "multi30k", "tok")
RAW = os.path.join(SHARED, "data", "multi30k")
ENV = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", NMT_BLAS_AUTOTUNE="0")


def run(*args, stdin=None):
    """The program's standard output; its failure fails the test."""
    p = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True, env=ENV)
    if p.returncode:
        raise AssertionError(f"nmt {' '.join(args)}: exit {p.returncode}: {p.stderr[-500:]}")
    return p.stdout


def lines(path, n):
    with open(path, encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


def path(name):
    return os.path.join(DIR, name)


TRAIN = ["--emb", "16", "--hid", "16", "--att", "16", "--maxout", "8", "--vocab", "300", "--batch", "20",
         "--max-updates", "150", "--threads", "1", "--optimizer", "adam", "--lr", "0.01"]


def setUpModule():
    for f, side in (("s", "en"), ("t", "fr")):
        with open(path(f), "w", encoding="utf-8") as out:
            out.write("\n".join(lines(os.path.join(TOK, "train." + side), 400)) + "\n")
    for name, seed in (("m.nmt", "1"), ("m2.nmt", "2")):
        if not os.path.exists(path(name)):
            run("train", "--src", path("s"), "--tgt", path("t"), "--model", path(name), "--seed", seed, *TRAIN)


SRC = lines(os.path.join(TOK, "test_2016_flickr.en"), 20)
TGT = lines(os.path.join(TOK, "test_2016_flickr.fr"), 20)


def write(name, text_lines):
    with open(path(name), "w", encoding="utf-8") as f:
        f.write("\n".join(text_lines) + "\n")
    return path(name)


def check_score_batch(case, tr, model, tag):
    """tr.score_batch of TGT given SRC against nmt score on model: tokens, their count, the total."""
    out = run("score", "--model", model, "--src", write(tag + "ss", SRC), "--tgt", write(tag + "st", TGT))
    res = tr.score_batch([s.split() for s in SRC], [t.split() for t in TGT])
    case.assertEqual(len(res), len(TGT))
    for line, r, t in zip(out.splitlines(), res, TGT):
        total, _, ntok = line.split("\t")
        case.assertEqual(r.tokens, t.split() + ["</s>"])
        case.assertEqual(len(r.log_probs), int(ntok))
        case.assertLessEqual(abs(sum(r.log_probs) - float(total)), 1e-6)


class Translate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tr = nmt.Translator(path("m.nmt"))

    def nbest_cli(self, *models):
        out = run("translate", *[a for m in models for a in ("--model", m)], "--beam", "5", "--n-best", "5",
                  stdin="\n".join(SRC) + "\n")
        got = {}
        for line in out.splitlines():
            i, text, features, score = line.split(" ||| ")  # Marian's n-best: features "F0= ..."
            got.setdefault(int(i), []).append((text, float(score)))
        return got

    def check_nbest(self, tr, want):
        res = tr.translate_batch([s.split() for s in SRC], beam_size=5, num_hypotheses=5, return_scores=True)
        for i, r in enumerate(res):
            self.assertEqual([" ".join(h) for h in r.hypotheses], [t for t, _ in want[i]], f"line {i}")
            for a, (_, b) in zip(r.scores, want[i]):
                self.assertLessEqual(abs(a - b), 1e-6, f"line {i}: {a} vs {b}")

    def test_nbest(self):
        self.check_nbest(self.tr, self.nbest_cli(path("m.nmt")))

    def test_ensemble(self):
        tr = nmt.Translator([path("m.nmt"), path("m2.nmt")])
        self.check_nbest(tr, self.nbest_cli(path("m.nmt"), path("m2.nmt")))

    def test_attention_and_links(self):
        out = run("translate", "--model", path("m.nmt"), "--alignment", "soft", stdin="\n".join(SRC) + "\n")
        hard = run("translate", "--model", path("m.nmt"), "--alignment", "hard", stdin="\n".join(SRC) + "\n")
        res = self.tr.translate_batch([s.split() for s in SRC], return_attention=True, return_alignment=True)
        for i, (line, hline, r) in enumerate(zip(out.splitlines(), hard.splitlines(), res)):
            text, soft = line.split(" ||| ")
            self.assertEqual(" ".join(r.hypotheses[0]), text)
            rows = [[float(x) for x in row.split()] for row in soft.split(" ; ")] if soft.strip() else []
            att = r.attention[0]
            n = len(r.hypotheses[0])
            self.assertEqual(len(rows), n)
            for t in range(n):
                for j, w in enumerate(rows[t]):
                    self.assertLessEqual(abs(float(att[t][j]) - w), 5.01e-5, f"line {i} [{t}][{j}]")
            links = " ".join(f"{s}-{t}" for s, t in r.alignments[0])
            self.assertEqual(links, hline.split(" ||| ")[1].strip(), f"line {i}")

    def test_text(self):
        want = run("translate", "--model", path("m.nmt"), "--beam", "3", stdin="\n".join(SRC) + "\n").splitlines()
        self.assertEqual(self.tr.translate(SRC, beam_size=3), want)
        raw = lines(os.path.join(RAW, "test_2016_flickr.en"), 20)
        want = run("translate", "--model", path("m.nmt"), "--tokenize", "en", "--lowercase", "--detokenize", "fr",
                   stdin="\n".join(raw) + "\n").splitlines()
        tr = nmt.Translator(path("m.nmt"), tokenize="en", lowercase=True, detokenize="fr")
        self.assertEqual(tr.translate(raw), want)

    def test_prefix_and_constraints(self):
        # the nmt program's --prefix and --constraints, and the phrases counted in each hypothesis
        pfx = [" ".join(t.split()[:2]) if i % 2 else "" for i, t in enumerate(TGT)]
        terms = [t.split()[-2] if len(t.split()) > 2 else "" for t in TGT]
        vocab = {line.split("\t")[1] for line in run("vocab", "--model", path("m.nmt"), "--side", "tgt").splitlines()}
        pfx = [p if all(w in vocab for w in p.split()) else "" for p in pfx]
        terms = [w if w in vocab else "" for w in terms]
        want = run("translate", "--model", path("m.nmt"), "--beam", "4", "--n-best", "2", "--prefix", write("pfx", pfx),
                   "--constraints", write("terms", terms), stdin="\n".join(SRC) + "\n")
        res = self.tr.translate_batch([s.split() for s in SRC], beam_size=4, num_hypotheses=2,
                                      target_prefix=[p.split() or None for p in pfx],
                                      constraints=[[[w]] if w else [] for w in terms])
        got = [f"{i} ||| {' '.join(h)}" for i, r in enumerate(res) for h in r.hypotheses]
        self.assertEqual(got, [" ||| ".join(line.split(" ||| ")[:2]) for line in want.splitlines()])
        for r, p, w in zip(res, pfx, terms):
            for h in r.hypotheses:
                self.assertEqual(h[:len(p.split())], p.split())
                self.assertTrue(not w or w in h, f"{w} not in {h}")
        with self.assertRaises(nmt.ArgumentError):
            self.tr.translate_batch([SRC[0].split()], constraints=[[["xyzzy"]]])

    def test_constraints_over_a_shortlist(self):
        # one translation a source word and one frequent word: the terms' words join the set
        if not os.path.exists(path("lex")):
            with open(path("links"), "w") as f:
                f.write(run("ibm", "--src", path("s"), "--tgt", path("t"), "--sym", "gdfa", "--threads", "1"))
            run("lex", "--src", path("s"), "--tgt", path("t"), "--align", path("links"), "--top", "5",
                "--out", path("lex"))
        vocab = {line.split("\t")[1] for line in run("vocab", "--model", path("m.nmt"), "--side", "tgt").splitlines()}
        terms = [t.split()[-2] if len(t.split()) > 2 and t.split()[-2] in vocab else "" for t in TGT]
        want = run("translate", "--model", path("m.nmt"), "--beam", "4", "--shortlist", path("lex") + ",1,1",
                   "--constraints", write("slterms", terms), stdin="\n".join(SRC) + "\n").splitlines()
        tr = nmt.Translator(path("m.nmt"), shortlist=(path("lex"), 1, 1))
        res = tr.translate_batch([s.split() for s in SRC], beam_size=4, constraints=[[[w]] if w else [] for w in terms])
        self.assertEqual([" ".join(r.hypotheses[0]) for r in res], want)
        self.assertGreaterEqual(sum(1 for w in terms if w), 10)
        for r, w in zip(res, terms):
            self.assertTrue(not w or w in r.hypotheses[0], f"{w} not in {r.hypotheses[0]}")

    def test_max_decoding_length(self):
        res = self.tr.translate_batch([s.split() for s in SRC], beam_size=1, max_decoding_length=4)
        full = self.tr.translate_batch([s.split() for s in SRC], beam_size=1)
        for a, b in zip(res, full):
            self.assertLessEqual(len(a.hypotheses[0]), 4)
            self.assertEqual(a.hypotheses[0], b.hypotheses[0][:len(a.hypotheses[0])])  # greedy: a prefix

    def test_score_batch(self):
        check_score_batch(self, self.tr, path("m.nmt"), "")

    def test_align_bits(self):
        soft = run("align", "--model", path("m.nmt"), "--src", write("as", SRC), "--tgt", write("at", TGT), "--soft")
        pharaoh = run("align", "--model", path("m.nmt"), "--src", path("as"), "--tgt", path("at")).splitlines()
        blocks = soft.split("\n\n")
        res = self.tr.align([s.split() for s in SRC], [t.split() for t in TGT])
        for i, (r, block) in enumerate(zip(res, blocks)):
            rows = [[float(x) for x in row.split()] for row in block.strip("\n").split("\n")]
            for t, row in enumerate(rows):
                for j, w in enumerate(row):  # 9 digits give a float32 back exactly
                    self.assertEqual(struct.pack("f", w), struct.pack("f", float(r.attention[t][j])), f"{i} [{t}][{j}]")
            self.assertEqual(" ".join(f"{s}-{t}" for s, t in sorted(r.links, key=lambda p: (p[1], p[0]))), pharaoh[i])


    def test_without_numpy(self):
        code = ("import sys, json; sys.modules['numpy'] = None; import nmt; t = nmt.Translator(sys.argv[1]); "
                "print(json.dumps(t.align([sys.argv[2].split()], [sys.argv[3].split()])[0].attention))")
        p = subprocess.run([sys.executable, "-c", code, path("m.nmt"), SRC[1], TGT[1]], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr[-500:])
        want = self.tr.align([SRC[1].split()], [TGT[1].split()])[0].attention
        self.assertEqual(json.loads(p.stdout), want.tolist())


class Metrics(unittest.TestCase):
    def test_bleu_chrf(self):
        hyp = lines(os.path.join(TOK, "test_2016_flickr.fr"), 200)  # tokenized against raw: high, not 100
        ref = lines(os.path.join(RAW, "test_2016_flickr.fr"), 200)
        write("h", hyp)
        for extra, kw in (([], {}), (["-lc"], {"lowercase": True}), (["-tok", "intl"], {"tokenize": "intl"})):
            want = json.loads(run("bleu", "-i", path("h"), write("r", ref), "-f", "json", "-m", "bleu", "chrf", *extra,
                                  "-w", "16"))
            b = nmt.bleu(hyp, [ref], **kw)
            c = nmt.chrf(hyp, [ref], lowercase=kw.get("lowercase", False))
            got = {x["name"]: x["score"] for x in want} if isinstance(want, list) else {"BLEU": want["score"]}
            self.assertAlmostEqual(b.score, got["BLEU"], places=12, msg=str(extra))
            if "chrF2" in got:
                self.assertAlmostEqual(c.score, got["chrF2"], places=12, msg=str(extra))
        self.assertEqual(nmt.bleu(["a b c d"], [["a b c d"]]).counts, [4, 3, 2, 1])

    def test_tokenizer(self):
        raw = lines(os.path.join(RAW, "test_2016_flickr.en"), 50)
        want = run("tokenize", "-l", "en", "--lowercase", stdin="\n".join(raw) + "\n").splitlines()
        self.assertEqual([" ".join(nmt.tokenize(x, "en", lowercase=True)) for x in raw], want)
        tok = lines(os.path.join(TOK, "test_2016_flickr.fr"), 50)
        want = run("detokenize", "-l", "fr", stdin="\n".join(tok) + "\n").splitlines()
        self.assertEqual([nmt.detokenize(x, "fr") for x in tok], want)


def safetensors(p):
    """A safetensors file read here (8-byte header length, JSON header, little-endian data)."""
    with open(p, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    head.pop("__metadata__", None)
    return {k: (v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in head.items()}


def same_tensors(test, a, b):
    """Two files' tensors: the same names, shapes and bytes (the names that differ in the message)."""
    test.assertEqual(sorted(a), sorted(b))
    test.assertEqual([k for k in a if a[k] != b[k]], [], "tensors that differ")


class Files(unittest.TestCase):
    def test_load_tensors(self):
        tensors, config = nmt.load_tensors(path("m.nmt"))
        self.assertEqual((config["arch"], config["hid"], config["src_vocab"]), ("rnnsearch", 16, 300))
        want = safetensors(path("m.nmt"))
        self.assertEqual(sorted(tensors), sorted(want))
        for name, (shape, data) in want.items():
            self.assertEqual(list(tensors[name].shape), shape, name)
            self.assertEqual(tensors[name].astype("<f4").tobytes(), data, name)

    def test_average(self):
        run("average", "--out", path("avg_cli.nmt"), path("m.nmt"), path("m2.nmt"))
        nmt.average([path("m.nmt"), path("m2.nmt")], path("avg_py.nmt"))
        same_tensors(self, safetensors(path("avg_cli.nmt")), safetensors(path("avg_py.nmt")))


class Train(unittest.TestCase):
    def test_option_names(self):
        helptext = run("train", "--help")
        cli = set(re.findall(r"^\s+(?:-\w+, )?--([a-z][a-z0-9-]*)", helptext, re.M))
        cli |= set(re.findall(r"--([a-z][a-z0-9-]*)", " ".join(l for l in helptext.splitlines() if l.startswith("  -"))))
        ours = set(nmt.train_options())
        only_cli = {"config", "dump-config", "log-every", "help", "normalize"}  # normalize: an old spelling
        self.assertEqual(sorted(cli - ours - only_cli), [], "options of nmt train that nmt.train lacks")
        self.assertEqual(sorted(ours - cli), [], "keys nmt train does not know")

    def test_same_model(self):
        cfg = {"src": path("s"), "tgt": path("t"), "model": path("py.nmt"), "emb": 16, "hid": 16, "att": 16,
               "maxout": 8, "vocab": 300, "batch": 20, "max-updates": 60, "threads": 1, "optimizer": "adam",
               "lr": 0.01, "reshuffle": True, "valid_src": path("s"), "valid-tgt": path("t"), "valid-every": 30}
        with open(path("run.yaml"), "w") as f:
            for k, v in cfg.items():
                f.write(f"{k.replace('_', '-')}: {str(v).lower() if isinstance(v, bool) else v}\n")
        run("train", "-c", path("run.yaml"), "--model", path("cli.nmt"))
        reports = []
        self.assertTrue(nmt.train(cfg, callback=lambda r: reports.append(r["kind"])))
        same_tensors(self, safetensors(path("py.nmt")), safetensors(path("cli.nmt")))
        self.assertIn("valid", reports)
        self.assertEqual(reports[-1], "end")

    def test_stop(self):
        cfg = {"src": path("s"), "tgt": path("t"), "model": path("stop.nmt"), "emb": 8, "hid": 8, "att": 8,
               "maxout": 4, "vocab": 100, "batch": 2, "max-updates": 100000, "threads": 1}
        stop = threading.Event()
        stop.set()
        self.assertFalse(nmt.train(cfg, stop=stop))
        self.assertTrue(os.path.exists(path("stop.nmt.ckpt")))
        self.assertFalse(nmt.train(dict(cfg, resume=path("stop.nmt.ckpt")), callback=lambda r: r["kind"] == "progress"))

        def boom(r):
            raise KeyError("from the callback")
        with self.assertRaises(KeyError):
            nmt.train(dict(cfg, resume=path("stop.nmt.ckpt")), callback=boom)


class Examples(unittest.TestCase):
    """examples/*.py run, and translate_file.py writes what nmt translate writes."""

    def example(self, name, *args):
        p = subprocess.run([sys.executable, os.path.join("examples", name), *args], capture_output=True, text=True,
                           env=ENV)
        self.assertEqual(p.returncode, 0, p.stderr[-800:])
        return p.stdout

    def test_examples(self):
        self.example("translate_file.py", path("m.nmt"), write("ex.in", SRC), path("ex.out"), "--beam", "4")
        want = run("translate", "--model", path("m.nmt"), "--beam", "4", "--input", path("ex.in"))
        with open(path("ex.out"), encoding="utf-8") as f:
            self.assertEqual(f.read(), want)
        self.assertTrue(self.example("plot_attention.py", path("m.nmt"), SRC[0], path("att.png")).strip())
        out = self.example("train_from_dict.py", path("s"), path("t"), path("s"), path("t"), path("ex.nmt"))
        self.assertIn("finished", out)
        self.assertTrue(os.path.exists(path("ex.nmt")))


class Robust(unittest.TestCase):
    def test_bad_arguments(self):
        tr = nmt.Translator(path("m.nmt"))
        bad = [
            (nmt.FileError, lambda: nmt.Translator(path("missing.nmt"))),
            (nmt.Error, lambda: nmt.Translator(path("s"))),
            (nmt.ArgumentError, lambda: nmt.Translator(path("m.nmt"), precision="fp8")),
            (nmt.ArgumentError, lambda: nmt.Translator(path("m.nmt"), device="cuda")),
            (nmt.ArgumentError, lambda: nmt.Translator([path("m.nmt")] * 2, weights=[1])),
            (TypeError, lambda: tr.translate_batch("a man")),
            (TypeError, lambda: tr.translate_batch([[1, 2]])),
            (nmt.ArgumentError, lambda: tr.translate_batch([["a b"]])),
            (nmt.ArgumentError, lambda: tr.translate_batch([[""]])),
            (nmt.ArgumentError, lambda: tr.translate_batch([["a"]], beam_size=0)),
            (nmt.ArgumentError, lambda: tr.translate_batch([["a"]], beam_size=2, num_hypotheses=3)),
            (nmt.ArgumentError, lambda: tr.translate_batch([["a"]], length_penalty=-1)),
            (nmt.ArgumentError, lambda: tr.translate_batch([["a"]], max_decoding_length=-1)),
            (TypeError, lambda: tr.translate_batch([["a"]], no_such_option=1)),
            (nmt.ArgumentError, lambda: tr.score_batch([["a"]], [["b"], ["c"]])),
            (nmt.ArgumentError, lambda: tr.score_batch([["a"]], [["b"] * 1300])),
            (nmt.ArgumentError, lambda: nmt.bleu(["a"], ["a"])),
            (nmt.ArgumentError, lambda: nmt.bleu(["a", "b"], [["a"]])),
            (nmt.ArgumentError, lambda: nmt.bleu(["a"], [["a"]], tokenize="zh")),
            (nmt.ArgumentError, lambda: nmt.tokenize("a", "xx")),
            (nmt.ArgumentError, lambda: nmt.train({"src": "a", "tgt": "b", "model": "c", "hidden": 3})),
            (nmt.ArgumentError, lambda: nmt.train({"src": "a", "tgt": "b", "model": "c", "hid": "many"})),
            (nmt.ArgumentError, lambda: nmt.train({"src": "a"})),
            (nmt.FileError, lambda: nmt.train({"src": path("none"), "tgt": path("none"), "model": path("x.nmt")})),
            (nmt.ArgumentError, lambda: nmt.average([], path("x.nmt"))),
            (nmt.FileError, lambda: nmt.load_tensors(path("missing.nmt"))),
        ]
        for i, (exc, call) in enumerate(bad):
            with self.assertRaises(exc, msg=f"case {i}"):
                call()
        self.assertEqual(tr.translate_batch([]), [])
        self.assertEqual(tr.translate_batch([[]])[0].hypotheses, [])

    def test_family_keys(self):
        # a key of the other model family is refused by name, as the program refuses the option
        base = {"src": path("none"), "tgt": path("none"), "model": path("x.nmt")}
        with self.assertRaisesRegex(nmt.ArgumentError, "heads belongs to arch transformer; not with arch rnnsearch"):
            nmt.train(dict(base, heads=4))
        with self.assertRaisesRegex(nmt.ArgumentError, "hid belongs to the recurrent models; not with arch transformer"):
            nmt.train(dict(base, arch="transformer", hid=32))
        with self.assertRaisesRegex(nmt.ArgumentError, "dropout-rnn belongs to the recurrent models"):
            nmt.train(dict(base, preset="transformer-hour", dropout_rnn=0.2))
        with self.assertRaisesRegex(nmt.ArgumentError, "alignment-head belongs to arch transformer; not with arch rnnsearch"):
            nmt.train(dict(base, alignment_head=0))
        # the family's own keys pass the check (and stop at the missing corpus)
        with self.assertRaises(nmt.FileError):
            nmt.train(dict(base, preset="transformer-hour", dim_ffn=128))
        with self.assertRaises(nmt.FileError):
            nmt.train(dict(base, arch="transformer", alignment_layer=1, alignment_head=0))
        with self.assertRaisesRegex(nmt.ArgumentError, "alignment-head: -1 out of range"):
            nmt.train(dict(base, arch="transformer", alignment_head=-1))

    def test_nul_refused(self):
        """A str with a NUL was cut there on its way to C (a model "x\\0.nmt" written to "x"): each is
        refused, naming the argument, and nothing is written."""
        tr = nmt.Translator(path("m.nmt"))
        cases = [
            ("hypotheses[1]", lambda: nmt.bleu(["a", "b\0c"], [["a", "b"]])),
            ("references[0]", lambda: nmt.bleu(["a"], [["a\0"]])),
            ("hypotheses[0]", lambda: nmt.chrf(["a\0b"], [["a"]])),
            ("tokenize", lambda: nmt.bleu(["a"], [["a"]], tokenize="13a\0x")),
            ("text", lambda: nmt.tokenize("a man\0 on a bike")),
            ("tokens[0]", lambda: nmt.detokenize(["a\0", "b"])),
            ("texts[1]", lambda: tr.translate(["a man", "a dog\0 runs"])),
            ("paths[0]", lambda: nmt.Translator(path("m.nmt") + "\0x")),
            ("path", lambda: nmt.load_tensors(path("m.nmt") + "\0x")),
            ("output", lambda: nmt.average([path("m.nmt")], path("nul") + "\0.nmt")),
            ("model", lambda: nmt.train({"src": path("s"), "tgt": path("t"), "model": path("nul") + "\0.nmt",
                                         "max-updates": 1})),
            ("src", lambda: nmt.train({"src": path("s") + "\0x", "tgt": path("t"), "model": path("nul2.nmt")})),
        ]
        for name, call in cases:
            with self.assertRaises(ValueError, msg=name) as cm:
                call()
            self.assertIn(name, str(cm.exception))
            self.assertIn("NUL", str(cm.exception))
        self.assertFalse(os.path.exists(path("nul")), "a path cut at its NUL was written")
        self.assertFalse(os.path.exists(path("nul2.nmt")))

    def test_max_decoding_length_absolute(self):
        """max_decoding_length caps the tokens of every hypothesis, EOS counted, on sources of any
        length (it was a ratio clamped at 0.01: 4 words on a 400-word source), a prefix's tokens
        included, as CTranslate2 counts them."""
        tr = nmt.Translator(path("m.nmt"))
        long_src = [" ".join(SRC * 3).split()[:nmt.MAX_SRC_WORDS], SRC[0].split()]
        self.assertEqual(len(long_src[0]), nmt.MAX_SRC_WORDS)
        for n in (1, 2, 5):
            for r in tr.translate_batch(long_src, beam_size=3, num_hypotheses=3, max_decoding_length=n):
                for h in r.hypotheses:
                    self.assertLessEqual(len(h), n, f"max_decoding_length={n}: {h}")
        prefix = tr.translate_batch([long_src[0]], beam_size=1, no_unk=True)[0].hypotheses[0][:2]
        res = tr.translate_batch([long_src[0]], beam_size=3, max_decoding_length=3, target_prefix=[prefix])
        h = res[0].hypotheses[0]
        self.assertEqual(h[:2], prefix)
        self.assertLessEqual(len(h), 3)
        with self.assertRaises(nmt.ArgumentError):  # the prefix and the EOS do not fit
            tr.translate_batch([long_src[0]], max_decoding_length=2, target_prefix=[prefix])

    def test_hint_error_names_the_sentence(self):
        """An error about one sentence's hints names it by its place in the caller's list, also with
        max_decoding_length (which once translated each source length apart: "sentence 12" for 58)."""
        tr = nmt.Translator(path("m.nmt"))
        src = [s.split() for s in SRC * 3]
        cons = [[] for _ in src]
        cons[58] = [["xyzzy"]]
        for opts in ({}, {"max_decoding_length": 50}):
            with self.assertRaises(nmt.ArgumentError) as cm:
                tr.translate_batch(src, beam_size=2, constraints=cons, **opts)
            self.assertIn("source[58]", str(cm.exception), opts)

    def test_init_twice(self):
        """A second __init__ is refused before it changes anything: the text stages stay."""
        m = path("m.nmt")
        args = ([m], None, "fp32", None, 100, 100, None, "en", "en", True, False)
        line = ["Two Men, Riding Bikes; Quickly!"]
        t = nmt._nmt.Translator(*args)
        with self.assertRaises(RuntimeError):
            t.__init__([m])
        self.assertEqual(t.translate(line), nmt._nmt.Translator(*args).translate(line))
        self.assertNotEqual(t.translate(line), nmt._nmt.Translator([m]).translate(line))

    def test_ctrl_c(self):
        """Ctrl-C during a long translate_batch (50,000 sentences in batches of 4: about 20 s here)
        or score_batch (50,000 pairs: about 12 s) raises KeyboardInterrupt within a batch, not
        when the whole call ends."""
        import signal
        import time
        calls = {"translate_batch": "tr.translate_batch(src, beam_size=12, batch_size=4)",
                 "score_batch": "tr.score_batch(src, tgt)"}
        for name, call in calls.items():
            code = (
                "import signal, sys, time, nmt\n"
                # a shell without job control starts background jobs with SIGINT ignored, and Python
                # then installs no KeyboardInterrupt: the test's parent may be such a job
                "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                "tr = nmt.Translator(sys.argv[1])\n"
                "src = [l.split() for l in open(sys.argv[2], encoding='utf-8').read().splitlines()] * 2500\n"
                "tgt = [l.split() for l in open(sys.argv[3], encoding='utf-8').read().splitlines()] * 2500\n"
                "print('ready', flush=True)\n"
                "try:\n"
                f"    {call}\n"
                "    print('finished', flush=True)\n"
                "except KeyboardInterrupt:\n"
                "    print('interrupted', flush=True)\n")
            p = subprocess.Popen([sys.executable, "-c", code, path("m.nmt"), write("cc.en", SRC), write("cc.fr", TGT)],
                                 stdout=subprocess.PIPE, text=True, env=ENV)
            try:
                self.assertEqual(p.stdout.readline().strip(), "ready")
                time.sleep(1.0)  # inside the call by now
                p.send_signal(signal.SIGINT)
                t0 = time.time()
                try:
                    out, _ = p.communicate(timeout=40)
                except subprocess.TimeoutExpired:
                    out = "still running 40 s after SIGINT"
                waited = time.time() - t0
            finally:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            self.assertEqual(out.strip(), "interrupted", name)
            # a batch takes well under a second; the whole call 12-20 s. 5 s leaves room for a loaded
            # machine (2.2 s seen with both cores busy) and still tells a batch from the call.
            self.assertLess(waited, 5.0, f"{name}: {waited:.1f} s from SIGINT to the end")

    def test_threads(self):
        tr = nmt.Translator(path("m.nmt"))
        batch = [s.split() for s in SRC]
        want = [r.hypotheses for r in tr.translate_batch(batch, beam_size=4, num_hypotheses=2)]
        got = [[], []]

        def work(k):
            for _ in range(5):
                got[k].append([r.hypotheses for r in tr.translate_batch(batch, beam_size=4, num_hypotheses=2)])
        ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(got, [[want] * 5] * 2)

    def test_memory(self):
        tr = nmt.Translator(path("m.nmt"))
        src, tgt = [SRC[0].split()], [TGT[0].split()]

        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

        def calls(n):
            for _ in range(n):
                tr.translate_batch(src, beam_size=2, return_attention=True, return_alignment=True, return_scores=True)
                tr.score_batch(src, tgt)
        calls(1000)
        before = rss()
        calls(10000)
        grown = rss() - before
        self.assertLess(grown, 256 * 1024, f"RSS grew by {grown} bytes over 10,000 calls")


TF_TRAIN = ["--arch", "transformer", "--dim-model", "32", "--enc-depth", "2", "--dec-depth", "2", "--heads", "4",
            "--dim-ffn", "64", "--max-updates", "600", "--vocab", "300", "--batch", "20", "--threads", "1",
            "--optimizer", "adam", "--lr", "0.01"]


class TransformerDecode(unittest.TestCase):
    """The package on a Transformer (tests/cli/lib.sh's tf600, which python.sh copies to tf.nmt;
    trained here when absent) against the program on the same model and options: n-best lists
    and scores under each ranking rule, forced scores, attention and links, draws, prefixes and
    constraints, UNK copying and replacement, and ensembles with itself and with the RNNsearch
    model m.nmt."""

    @classmethod
    def setUpClass(cls):
        cls.m = path("tf.nmt")
        if not os.path.exists(cls.m):
            run("train", "--src", path("s"), "--tgt", path("t"), "--model", cls.m, *TF_TRAIN)
        cls.tr = nmt.Translator(cls.m)
        cls.src = [s.split() for s in SRC]

    def nbest(self, models, *opts):
        """The program's n-best lists: {line: [(text, score), ...]}."""
        out = run("translate", *[a for m in models for a in ("--model", m)], "--threads", "1", *opts,
                  stdin="\n".join(SRC) + "\n")
        got = {}
        for line in out.splitlines():
            f = line.split(" ||| ")
            got.setdefault(int(f[0]), []).append((f[1], float(f[-1])))
        return got

    def same(self, res, want, n):
        self.assertEqual(len(res), len(SRC))
        for i, r in enumerate(res):
            self.assertEqual([" ".join(h) for h in r.hypotheses], [t for t, _ in want[i]], f"line {i}")
            self.assertEqual(len(r.hypotheses), n, f"line {i}")
            for a, (_, b) in zip(r.scores, want[i]):
                self.assertLessEqual(abs(a - b), 1e-6, f"line {i}: {a} vs {b}")

    def test_nbest_and_length_penalty(self):
        for lp, opts in ((1.0, ()), (0.6, ("--length-penalty", "0.6")), (0, ("--no-length-norm",))):
            res = self.tr.translate_batch(self.src, beam_size=4, num_hypotheses=4, length_penalty=lp, return_scores=True)
            self.same(res, self.nbest([self.m], "--beam", "4", "--n-best", "4", *opts), 4)

    def test_score_batch(self):
        check_score_batch(self, self.tr, self.m, "tf_")

    def test_attention_links_and_unk_copy(self):
        soft = run("translate", "--model", self.m, "--beam", "4", "--alignment", "soft", stdin="\n".join(SRC) + "\n")
        hard = run("translate", "--model", self.m, "--beam", "4", "--alignment", "hard", stdin="\n".join(SRC) + "\n")
        copy = run("translate", "--model", self.m, "--beam", "4", "--unk-copy", stdin="\n".join(SRC) + "\n")
        res = self.tr.translate_batch(self.src, beam_size=4, return_attention=True, return_alignment=True)
        rep = self.tr.translate_batch(self.src, beam_size=4, replace_unknowns=True)
        self.assertTrue(any("<unk>" in r.hypotheses[0] for r in res), "no <unk> to replace")
        for i, (line, hline, cline, r, u) in enumerate(zip(soft.splitlines(), hard.splitlines(), copy.splitlines(), res, rep)):
            text, rows = line.split(" ||| ")
            self.assertEqual(" ".join(r.hypotheses[0]), text, f"line {i}")
            rows = [[float(x) for x in row.split()] for row in rows.split(" ; ")] if rows.strip() else []
            att = r.attention[0]
            self.assertEqual(len(rows), len(r.hypotheses[0]), f"line {i}")
            for t, row in enumerate(rows):
                self.assertEqual(len(row), len(att[t]), f"line {i} row {t}")
                for j, w in enumerate(row):
                    self.assertLessEqual(abs(float(att[t][j]) - w), 5.01e-5, f"line {i} [{t}][{j}]")
            self.assertEqual(" ".join(f"{s}-{t}" for s, t in r.alignments[0]), hline.split(" ||| ")[1].strip(), f"line {i}")
            self.assertEqual(" ".join(u.hypotheses[0]), cline, f"line {i}")

    def test_unk_lexicon(self):
        words = sorted({w for s in SRC for w in s.split()})
        table = write("tf_lex", [f"{w}\tXX{w}" for w in words[::2]])
        want = run("translate", "--model", self.m, "--beam", "4", "--unk-replace", table, stdin="\n".join(SRC) + "\n")
        res = nmt.Translator(self.m, unk_lexicon=table).translate_batch(self.src, beam_size=4, replace_unknowns=True)
        got = [" ".join(r.hypotheses[0]) for r in res]
        self.assertEqual(got, want.splitlines())
        self.assertTrue(any("XX" in g for g in got), "the table translated no <unk>")

    def test_sampling(self):
        for opts, kw in (((), {}), (("--sample-topk", "5", "--temperature", "0.7"), {"sampling_topk": 5, "sampling_temperature": 0.7}),
                         (("--sample-topp", "0.8"), {"sampling_topp": 0.8})):
            want = self.nbest([self.m], "--sample", "--seed", "5", "--n-best", "3", *opts)
            res = self.tr.translate_batch(self.src, num_hypotheses=3, seed=5, return_scores=True,
                                          **dict({"sampling_topk": 0}, **kw))
            self.same(res, want, 3)

    def test_prefix_and_constraints(self):
        vocab = {line.split("\t")[1] for line in run("vocab", "--model", self.m, "--side", "tgt").splitlines()}
        pfx = [" ".join(t.split()[:2]) if i % 2 else "" for i, t in enumerate(TGT)]
        pfx = [p if all(w in vocab for w in p.split()) else "" for p in pfx]
        terms = [t.split()[-2] if len(t.split()) > 2 and t.split()[-2] in vocab else "" for t in TGT]
        self.assertGreaterEqual(sum(1 for p in pfx if p), 5)
        self.assertGreaterEqual(sum(1 for w in terms if w), 10)
        want = self.nbest([self.m], "--beam", "4", "--n-best", "2", "--prefix", write("tf_pfx", pfx),
                          "--constraints", write("tf_terms", terms))
        res = self.tr.translate_batch(self.src, beam_size=4, num_hypotheses=2, return_scores=True,
                                      target_prefix=[p.split() or None for p in pfx],
                                      constraints=[[[w]] if w else [] for w in terms])
        self.same(res, want, 2)
        for r, p, w in zip(res, pfx, terms):
            for h in r.hypotheses:
                self.assertEqual(h[:len(p.split())], p.split())
                self.assertTrue(not w or w in h, f"{w} not in {h}")

    def test_ensembles(self):
        alone = self.tr.translate_batch(self.src, beam_size=4, num_hypotheses=3, return_scores=True)
        twice = nmt.Translator([self.m, self.m]).translate_batch(self.src, beam_size=4, num_hypotheses=3, return_scores=True)
        self.assertEqual(twice, alone)
        for models, weights in (([self.m, path("m.nmt")], None), ([path("m.nmt"), self.m], [1, 3])):
            opts = ("--weights", ",".join(map(str, weights))) if weights else ()
            want = self.nbest(models, "--beam", "4", "--n-best", "3", *opts)
            res = nmt.Translator(models, weights=weights).translate_batch(self.src, beam_size=4, num_hypotheses=3,
                                                                          return_scores=True)
            self.same(res, want, 3)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"python: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
