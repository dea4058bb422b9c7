#!/usr/bin/env python3
"""aer_check.py: an independent AER / SAER calculator that tests/cli/aer.sh checks `nmt aer`
against. It shares no code with src/eval/aer.c: links are Python sets, matrices lists of rows.

  aer_check.py --gold G [--possible P] (--test T | --soft M | both) [--reverse]
      prints what `nmt aer` prints. G: 0-based "i-j" sure / "i?j" possible, one line per
      sentence (with --possible, G holds S and P all of P). T: 0-based Pharaoh, source first
      ("j-i" with --reverse). M: soft matrices, one row per target word, an empty line after
      each sentence. Without --test, A is the arg-max of M (first maximum; none for a zero row).
  aer_check.py --write-soft OUT --src SRC --tgt TGT --test T --seed N
      writes made-up attention matrices shaped by the token files, peaked on T's links.
"""
import argparse
import random
import sys


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def read_gold(path, possible):
    sure, poss = [], []
    for line in read_lines(path):
        s, p = set(), set()
        for tok in line.split():
            sep = "?" if "?" in tok else "-"
            i, j = tok.split(sep)
            p.add((int(i), int(j)))
            if sep == "-":
                s.add((int(i), int(j)))
        sure.append(s)
        poss.append(p)
    if possible:
        poss = [set(tuple(int(x) for x in t.split("-")) for t in line.split())
                for line in read_lines(possible)]
        assert len(poss) == len(sure) and all(s <= p for s, p in zip(sure, poss))
    return sure, poss


def read_test(path, reverse):
    out = []
    for line in read_lines(path):
        links = set()
        for tok in line.split():
            a, b = (int(x) for x in tok.split("-"))
            links.add((b, a) if reverse else (a, b))
        out.append(links)
    return out


def read_soft(path):
    mats, rows = [], []
    for line in read_lines(path):
        if line.strip():
            rows.append([float(x) for x in line.split()])
        elif rows:
            mats.append(rows)
            rows = []
    if rows:
        mats.append(rows)
    return mats


def argmax_links(mats):
    out = []
    for m in mats:
        links = set()
        for j, row in enumerate(m):
            i = max(range(len(row)), key=row.__getitem__)
            if row[i] > 0:
                links.add((i, j))
        out.append(links)
    return out


def show(name, v):
    print(f"{name:<10} {v}")


def ratio(num, den):
    return "n/a" if den == 0 else f"{num / den:.6f}"


def score(args):
    sure, poss = read_gold(args.gold, args.possible)
    mats = read_soft(args.soft) if args.soft else None
    test = read_test(args.test, args.reverse) if args.test else argmax_links(mats)
    assert len(test) == len(sure)
    a = sum(len(t) for t in test)
    s = sum(len(x) for x in sure)
    p = sum(len(x) for x in poss)
    a_s = sum(len(t & x) for t, x in zip(test, sure))
    a_p = sum(len(t & x) for t, x in zip(test, poss))
    show("sentences", len(sure))
    for name, v in (("A", a), ("S", s), ("P", p), ("A&S", a_s), ("A&P", a_p)):
        show(name, v)
    show("precision", ratio(a_p, a))
    show("recall", ratio(a_s, s))
    show("AER", "n/a" if a + s == 0 else f"{1 - (a_s + a_p) / (a + s):.6f}")
    if mats is not None:
        assert len(mats) == len(sure)
        m_a = m_s = m_as = m_ap = 0.0
        for m, ss, pp in zip(mats, sure, poss):
            m_a += sum(sum(row) for row in m)
            m_s += len(ss)
            m_as += sum(m[j][i] for i, j in ss)
            m_ap += sum(m[j][i] for i, j in pp)
        show("M_A", f"{m_a:.6f}")
        show("SAER", "n/a" if m_a + m_s == 0 else f"{1 - (m_as + m_ap) / (m_a + m_s):.6f}")


def write_soft(args):
    rng = random.Random(args.seed)
    src = [len(line.split(" ")) for line in read_lines(args.src)]
    tgt = [len(line.split(" ")) for line in read_lines(args.tgt)]
    test = read_test(args.test, False)
    with open(args.write_soft, "w", encoding="utf-8") as f:
        for tx, ty, links in zip(src, tgt, test):
            for j in range(ty):
                w = [rng.random() for _ in range(tx)]
                for i, jj in links:
                    if jj == j:
                        w[i] += 3 * tx
                z = sum(w) / 0.9  # as if 0.1 went to the source EOS column, which is left out
                f.write(" ".join(f"{x / z:.6g}" for x in w) + "\n")
            f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--gold", "--possible", "--test", "--soft", "--write-soft", "--src", "--tgt"):
        ap.add_argument(opt)
    ap.add_argument("--reverse", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    write_soft(args) if args.write_soft else score(args)


if __name__ == "__main__":
    sys.exit(main())
