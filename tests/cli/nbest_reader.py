#!/usr/bin/env python3
"""nbest_reader.py: a reader of Marian's n-best format, written for the tests from the format's
description (marian-dev, src/translator/output_printer.h; Moses' n-best lists):

    ID ||| TEXT [||| ALIGNMENT] [||| WordScores= s ...] ||| F0= x [F1= y ...] ||| SCORE

It checks nmt translate's lines against what it is told independently: the inputs, `nmt score`'s
log-probabilities of the same hypotheses, the number of models, the length penalty.

    nbest_reader.py check NBEST SRC --score "NMT score --model M" [--k K] [--alpha A | --raw]
                   [--word-scores] [--align hard|soft] [--ratio R]
        runs the `nmt score` command given on each hypothesis and its source, then checks the
        fields, the ids, the feature (equal to `nmt score`'s total where the hypothesis ended with
        EOS), the score from F0 and the length, word scores summing to F0, links within the
        printed words
    nbest_reader.py rows TOKENS_SOFT PRINTED_SOFT
        1-best lines with soft alignments, over tokens and over the printed (detokenized)
        words: each printed word's row is the mean of its tokens' rows
Prints what is wrong on stderr and exits 1; prints "ok N" and exits 0 otherwise.
"""
import html
import os
import shlex
import subprocess
import sys
import tempfile

SEP = " ||| "


def parse(line):
    """One n-best line as a dict: id, text, align, word_scores, features (name -> value), score."""
    f = line.rstrip("\n").split(SEP)
    if len(f) < 4:
        raise ValueError("fewer than 4 fields: %r" % line)
    rec = {"id": int(f[0]), "text": f[1], "score": float(f[-1]), "align": None, "word_scores": None}
    feats = f[-2].split()
    if len(feats) % 2 or not feats:
        raise ValueError("features field %r is not NAME= VALUE pairs" % f[-2])
    rec["features"] = {}
    for name, value in zip(feats[0::2], feats[1::2]):
        if not name.endswith("="):
            raise ValueError("feature name %r does not end in '='" % name)
        rec["features"][name[:-1]] = float(value)
    for mid in f[2:-2]:
        if mid.startswith("WordScores="):
            rec["word_scores"] = [float(x) for x in mid[len("WordScores="):].split()]
        elif rec["align"] is None:
            rec["align"] = mid
        else:
            raise ValueError("an extra field %r" % mid)
    return rec


def read(path):
    with open(path, encoding="utf-8") as fh:
        return [parse(l) for l in fh]


def lines(path):
    with open(path, encoding="utf-8") as fh:
        return [l.rstrip("\n") for l in fh]


def nmt_totals(cmd, recs, src):
    """`nmt score`'s totals of each record's hypothesis given its source, by the command cmd."""
    with tempfile.TemporaryDirectory() as d:
        ps, pt = os.path.join(d, "src"), os.path.join(d, "tgt")
        with open(ps, "w", encoding="utf-8") as a, open(pt, "w", encoding="utf-8") as b:
            for r in recs:
                a.write(src[r["id"]] + "\n")
                b.write(r["text"] + "\n")
        out = subprocess.run(shlex.split(cmd) + ["--src", ps, "--tgt", pt], check=True, capture_output=True, text=True).stdout
    return [float(l.split("\t")[0]) for l in out.splitlines()]


def opts(args):
    o = {"k": None, "alpha": 1.0, "raw": False, "word_scores": False, "align": None, "ratio": 3.0}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--word-scores", "--raw"):
            o[a[2:].replace("-", "_")] = True
            i += 1
            continue
        v = args[i + 1]
        if a == "--score":
            o["score"] = v
        elif a in ("--k", "--alpha", "--ratio"):
            o[a[2:]] = float(v)
        elif a == "--align":
            o["align"] = v
        else:
            raise SystemExit("nbest_reader.py: unknown option " + a)
        i += 2
    return o


def near(a, b, tol):
    return abs(a - b) <= tol


def check_links(r, nsrc, errs, n):
    """Pharaoh links src-tgt: within the source and the printed words."""
    ntgt = len(r["text"].split())
    for link in (r["align"] or "").split():
        j, i = (int(x) for x in link.split("-"))
        if not (0 <= j < nsrc and 0 <= i < ntgt):
            errs.append("line %d: link %s outside %d x %d words" % (n, link, nsrc, ntgt))


def check(nbest, src, o):
    s = lines(src)
    recs = read(nbest)
    totals = nmt_totals(o["score"], recs, s)
    errs, seen, last, checked = [], {}, -1, 0
    for n, r in enumerate(recs, 1):
        if r["id"] != last and r["id"] != last + 1:
            errs.append("line %d: id %d after %d" % (n, r["id"], last))
        last = r["id"]
        seen[r["id"]] = seen.get(r["id"], 0) + 1
        if sorted(r["features"]) != ["F0"]:
            errs.append("line %d: features %s, expected F0" % (n, sorted(r["features"])))
            continue
        ntok = len(r["text"].split())
        nsrc = len(s[r["id"]].split())
        cut = ntok == int(o["ratio"] * (nsrc + 1))  # at the length limit: no EOS
        lp = r["features"]["F0"]
        if not cut:
            checked += 1
            if not near(lp, totals[n - 1], 2e-4):
                errs.append("line %d: F0= %g but nmt score says %g" % (n, lp, totals[n - 1]))
            want = lp if o["raw"] else lp / (ntok + 1) ** o["alpha"]
            if not near(r["score"], want, 2e-4):
                errs.append("line %d: score %g, expected %g from the features and %d tokens" % (n, r["score"], want, ntok))
        if o["word_scores"]:
            ws = r["word_scores"]
            if ws is None or len(ws) != ntok + (not cut):
                errs.append("line %d: %s word scores for %d tokens" % (n, None if ws is None else len(ws), ntok))
            elif not near(sum(ws), lp, 1e-3):
                errs.append("line %d: word scores sum to %g, the log-probability is %g" % (n, sum(ws), lp))
        if o["align"] == "hard":
            check_links(r, nsrc, errs, n)
    if o["k"] and any(c != o["k"] for c in seen.values()):
        errs.append("not %d lines per input: %s" % (o["k"], seen))
    if checked == 0:
        errs.append("no hypothesis ended with EOS: nothing compared")
    for e in errs[:10]:
        print(e, file=sys.stderr)
    if not errs:
        print("ok", len(recs))
    return 1 if errs else 0


def word_of(tokens, printed):
    """Which printed word each token is part of, found by walking the printed line's characters:
    a token appears as it is or HTML-unescaped ("@-@" as "-"); blanks separate printed words."""
    out, pos, word, text = [], 0, -1, printed
    gap = True
    for t in tokens:
        while pos < len(text) and text[pos] == " ":
            pos += 1
            gap = True
        for form in (t, "-" if t == "@-@" else html.unescape(t)):
            if text.startswith(form, pos):
                break
        else:
            raise ValueError("token %r not found at %d of %r" % (t, pos, printed))
        if gap:
            word += 1
            gap = False
        out.append(word)
        pos += len(form)
    return out


def rows(tok_path, printed_path):
    errs, joined = [], 0
    for n, (a, b) in enumerate(zip(lines(tok_path), lines(printed_path)), 1):
        ta, sa = a.split(SEP)
        tb, sb = b.split(SEP)
        ra = [[float(x) for x in r.split()] for r in sa.split(" ; ")] if sa.strip() else []
        rb = [[float(x) for x in r.split()] for r in sb.split(" ; ")] if sb.strip() else []
        wo = word_of(ta.split(), tb)
        if len(rb) != len(tb.split()) or len(ra) != len(wo):
            errs.append("line %d: %d rows for %d printed words, %d for %d tokens" % (n, len(rb), len(tb.split()), len(ra), len(wo)))
            continue
        joined += len(wo) - len(rb)
        for i, row in enumerate(rb):
            mine = [ra[t] for t in range(len(wo)) if wo[t] == i]
            mean = [sum(c) / len(mine) for c in zip(*mine)]
            if any(not near(x, y, 2e-4) for x, y in zip(row, mean)) or len(row) != len(mean):
                errs.append("line %d: printed word %d's row %s is not the mean of its tokens' %s" % (n, i, row, mean))
    if joined == 0:
        errs.append("the detokenizer joined no tokens: nothing compared")
    for e in errs[:10]:
        print(e, file=sys.stderr)
    if not errs:
        print("ok", joined, "tokens joined")
    return 1 if errs else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "check":
        return check(argv[1], argv[2], opts(argv[3:]))
    if len(argv) == 3 and argv[0] == "rows":
        return rows(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
