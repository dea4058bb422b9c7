"""marian_cmp.py KIND NMT MARIAN [TOL]: compares an nmt output file with Marian's (tests/cli/marian_import.sh).
KIND: best (1-best lines equal), rawbest (raw text against Marian's pieces decoded), nbest (per sentence the same hypotheses in the same order, F0 and
total within TOL plus half a unit of the last digit Marian printed), wscores (n-best word scores within TOL), score (nmt score's TOTAL column against
marian-scorer's numbers), hard (n-best lines' Pharaoh
links equal as sets; SRC, a 5th argument, the source pieces), fhard (nmt align's links against
marian-scorer's), soft (1-best soft alignments within TOL), fsoft (nmt align --soft's matrices
against marian-scorer's). Prints one line
of counts; exits 1 on any difference (every difference is counted and the first few shown)."""
import sys

kind, mine, theirs = sys.argv[1], sys.argv[2], sys.argv[3]
tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
a = open(mine, encoding="utf-8").read().splitlines()
b = open(theirs, encoding="utf-8").read().splitlines()
bad, worst, shown = 0, 0.0, 0


def differ(msg):
    global bad, shown
    bad += 1
    if shown < 5:
        print("  " + msg)
        shown += 1


def printed(s):
    """half a unit of the last digit Marian printed (it prints 6 significant digits: -141.304)"""
    s = s.strip()
    return 0.5 * 10 ** -(len(s) - s.index(".") - 1) if "." in s and "e" not in s else 0.5


def fields(line):
    return [f.strip() for f in line.split("|||")]


if len(a) != len(b) and kind != "fsoft":
    print(f"{kind}: {len(a)} lines against Marian's {len(b)}")
    sys.exit(1)
if kind == "best":
    for i, (x, y) in enumerate(zip(a, b)):
        if x.strip() != y.strip():
            differ(f"line {i + 1}: '{x}' against Marian's '{y}'")
    print(f"best: {len(a) - bad} of {len(a)} lines equal")
elif kind == "rawbest":
    # Marian's pieces decoded as SentencePiece decodes normal pieces: joined, U+2581 a space
    for i, (x, y) in enumerate(zip(a, b)):
        text = "".join(y.split()).replace("\u2581", " ").strip()
        if x.strip() != text:
            differ(f"line {i + 1}: '{x}' against Marian's '{text}'")
    print(f"rawbest: {len(a) - bad} of {len(a)} lines equal")
elif kind == "nbest":
    for i, (x, y) in enumerate(zip(a, b)):
        fx, fy = fields(x), fields(y)
        if fx[0] != fy[0] or fx[1] != fy[1]:
            differ(f"line {i + 1}: '{fx[1]}' against Marian's '{fy[1]}'")
            continue
        f0x, f0y = float(fx[-2].split()[-1]), float(fy[-2].split()[-1])
        d = max(abs(f0x - f0y), abs(float(fx[-1]) - float(fy[-1])))
        worst = max(worst, d)
        if abs(f0x - f0y) > tol + printed(fy[-2].split()[-1]) or abs(float(fx[-1]) - float(fy[-1])) > tol + printed(fy[-1]):
            differ(f"line {i + 1}: scores {fx[-2]} {fx[-1]} against Marian's {fy[-2]} {fy[-1]}")
    print(f"nbest: {len(a) - bad} of {len(a)} entries the same hypothesis with scores within {tol:g}; max difference {worst:.2e}")
elif kind == "wscores":
    # n-best lines with WordScores= (one per piece and one for the EOS when there is one)
    for i, (x, y) in enumerate(zip(a, b)):
        fx, fy = fields(x), fields(y)
        if fx[1] != fy[1]:
            differ(f"line {i + 1}: '{fx[1]}' against Marian's '{fy[1]}'")
            continue
        wx, wy = fx[2].split()[1:], fy[2].split()[1:]
        if len(wx) != len(wy):
            differ(f"line {i + 1}: {len(wx)} word scores against Marian's {len(wy)}")
            continue
        d = max(abs(float(u) - float(v)) for u, v in zip(wx, wy))
        worst = max(worst, d)
        if any(abs(float(u) - float(v)) > tol + printed(v) for u, v in zip(wx, wy)):
            differ(f"line {i + 1}: word scores differ by {d:.2e}")
    print(f"wscores: {len(a) - bad} of {len(a)} entries' word scores within {tol:g}; max difference {worst:.2e}")
elif kind == "score":
    for i, (x, y) in enumerate(zip(a, b)):
        d = abs(float(x.split("\t")[0]) - float(fields(y)[0]))
        worst = max(worst, d)
        if d > tol + printed(fields(y)[0]):
            differ(f"line {i + 1}: {x.split()[0]} against Marian's {y}")
    print(f"score: {len(a) - bad} of {len(a)} within {tol:g}; max difference {worst:.2e}")
elif kind in ("hard", "fhard"):
    # Marian links the target EOS too (its last row), nmt prints the rows of words only: that row
    # is dropped from Marian's. A word Marian links to the source EOS nmt links elsewhere (nmt
    # never links to it, `nmt align --help`): those words are left out and counted in the output.
    src = open(sys.argv[5], encoding="utf-8").read().splitlines() if len(sys.argv) > 5 else None
    to_eos = 0
    for i, (x, y) in enumerate(zip(a, b)):
        fx, fy = fields(x), fields(y)
        lx = fx[2] if kind == "hard" else fx[0]
        ly = fy[2] if kind == "hard" else fy[1]
        my = [tuple(map(int, l.split("-"))) for l in ly.split()]
        T = len(fy[1].split()) if kind == "hard" else max(t for s_, t in my)  # the EOS row, when there is one
        S = len(src[int(fy[0]) if kind == "hard" else i].split()) if src else None
        keep = {f"{s_}-{t}" for s_, t in my if t < T and s_ != S}
        eos_rows = {t for s_, t in my if t < T and s_ == S}
        to_eos += len(eos_rows)
        mine_links = {l for l in lx.split() if int(l.split("-")[1]) not in eos_rows}
        if mine_links != keep:
            differ(f"line {i + 1}: '{lx}' against Marian's '{ly}'")
    print(f"{kind}: {len(a) - bad} of {len(a)} alignments equal ({to_eos} words Marian links to the source EOS, which nmt "
          "never does, left out)")
elif kind == "soft":
    # nmt: "w w ... ; w w ..." per word (4 decimals), Marian "w,w,... w,w,..." with the EOS row last
    for i, (x, y) in enumerate(zip(a, b)):
        gx = [g.split() for g in fields(x)[-1].split(";")]
        gy = [g.split(",") for g in fields(y)[-1].split()]
        gy = gy[:len(fields(y)[0].split())]  # the EOS row dropped (a hypothesis cut at the length limit has none)
        if len(gx) != len(gy):
            differ(f"line {i + 1}: {len(gx)} target positions against Marian's {len(gy)}")
            continue
        d = max(abs(float(u) - float(v)) if len(px) == len(py) else float("inf") for px, py in zip(gx, gy) for u, v in zip(px, py))
        worst = max(worst, d)
        if d > tol:
            differ(f"line {i + 1}: weights differ by {d:.2e}")
    print(f"soft: {len(a) - bad} of {len(a)} alignments within {tol:g}; max difference {worst:.2e}")
elif kind == "fsoft":
    # nmt align --soft: a line per target word, a blank line per pair, no EOS column; Marian's
    # score lines "score ||| w,w,... ..." with the source EOS column and the EOS row
    pairs, cur = [], []
    for line in a:
        if line.strip():
            cur.append(line.split())
        else:
            pairs.append(cur)
            cur = []
    a = pairs
    for i, (gx, y) in enumerate(zip(a, b)):
        gy = [g.split(",")[:-1] for g in fields(y)[-1].split()][:-1]
        if len(gx) != len(gy) or any(len(u) != len(v) for u, v in zip(gx, gy)):
            differ(f"pair {i + 1}: a {len(gx)}-row matrix against Marian's {len(gy)} rows")
            continue
        d = max(abs(float(u) - float(v)) for px, py in zip(gx, gy) for u, v in zip(px, py))
        worst = max(worst, d)
        if d > tol:
            differ(f"pair {i + 1}: weights differ by {d:.2e}")
    print(f"fsoft: {len(b) - bad} of {len(b)} matrices within {tol:g}; max difference {worst:.2e}")
sys.exit(1 if bad else 0)
