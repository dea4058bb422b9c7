#!/usr/bin/env python3
"""ter_check.py: a second, plain TER calculator that tests/cli/bleu.sh checks `nmt bleu -m ter`
against on long and lopsided sentences, where the shift limits and the edit-distance band
(which sacreBLEU's reference values in shared/data/bleu never reach) decide the result. It
shares no code with src/eval/ter.c: every distance is a fresh full computation (no reuse of a
common prefix, no rolling rows), words are Python strings, and the rules are written from
sacreBLEU 2.x's documented tercom behaviour (blocks of 1..10 words at most 50 positions away,
at most 1000 candidates per segment, a band of 25 around the length-scaled diagonal).

  ter_check.py --write HYP REF --seed N   writes made-up sentence pairs that reach those limits
  ter_check.py HYP REF                    prints each line's TER as `nmt bleu -m ter --sentence
                                          -b -w 10` does (words split at whitespace, lowercased)
"""
import argparse
import math
import random

BLOCK, REACH, BAND, TRIES = 10, 50, 25, 1000


def distance(hyp, ref):
    """The banded edit distance of hyp to ref and, per cell, the edit that reached it."""
    nh, nr = len(hyp), len(ref)
    slope = nr / nh if nh else 1.0
    width = math.ceil(slope / 2 + BAND) if BAND < slope / 2 else BAND
    far = 1 << 40
    costs = [list(range(nr + 1))]
    edits = [['add'] * (nr + 1)]
    for i in range(1, nh + 1):
        mid = math.floor(i * slope)
        first, stop = max(0, mid - width), min(nr + 1, mid + width)
        if i == nh:
            stop = nr + 1
        above = costs[-1]
        row, how = [far] * (nr + 1), ['none'] * (nr + 1)
        for j in range(first, stop):
            if j == 0:
                row[0], how[0] = above[0] + 1, 'drop'
                continue
            same = hyp[i - 1] == ref[j - 1]
            for c, e in ((above[j - 1] + (not same), 'keep' if same else 'swap'),
                         (above[j] + 1, 'drop'), (row[j - 1] + 1, 'add')):
                if c < row[j]:
                    row[j], how[j] = c, e
        costs.append(row)
        edits.append(how)
    return costs[nh][nr], edits


def unmatched(edits, nh, nr):
    """Which hypothesis and reference words are wrong, and the hypothesis position before which
    each reference word sits."""
    path, i, j = [], nh, nr
    while i or j:
        e = edits[i][j]
        path.append(e)
        if e in ('keep', 'swap'):
            i, j = i - 1, j - 1
        elif e == 'add':
            j -= 1
        else:
            i -= 1
    hyp_bad, ref_bad, at = [], [], []
    h = -1
    for e in reversed(path):
        if e != 'add':
            h += 1
            hyp_bad.append(e != 'keep')
        if e != 'drop':
            at.append(h)
            ref_bad.append(e != 'keep')
    return hyp_bad, ref_bad, at


def moved(words, start, size, to):
    block = words[start:start + size]
    if to < start:
        return words[:to] + block + words[to:start] + words[start + size:]
    if to > start + size:
        return words[:start] + words[start + size:to] + block + words[to:]
    return words[:start] + words[start + size:to + size] + block + words[to + size:]


def edits_of(hyp, ref):
    if not ref:
        return len(hyp)
    words, shifts, tried = list(hyp), 0, 0
    while True:
        now, edits = distance(words, ref)
        hyp_bad, ref_bad, at = unmatched(edits, len(words), len(ref))
        best, best_words = None, None
        for sh in range(len(words)):
            for sr in range(len(ref)):
                if abs(sr - sh) > REACH:
                    continue
                size = 0
                while size < BLOCK and words[sh + size] == ref[sr + size]:
                    size += 1
                    if any(hyp_bad[sh:sh + size]) and any(ref_bad[sr:sr + size]) \
                            and not sh <= at[sr] < sh + size:
                        seen = None
                        for k in range(-1, size):
                            to = 0 if sr + k < 0 else at[sr + k] + 1
                            if to == seen:
                                continue
                            seen = to
                            cand = moved(words, sh, size, to)
                            tried += 1
                            rank = (now - distance(cand, ref)[0], size, -sh, -to)
                            if best is None or rank > best:
                                best, best_words = rank, cand
                        if tried >= TRIES:
                            break
                    if sh + size == len(words) or sr + size == len(ref):
                        break
                if tried >= TRIES:
                    break
            if tried >= TRIES:
                break
        if tried >= TRIES or best is None or best[0] <= 0:
            return shifts + now
        shifts += 1
        words = best_words


def write_cases(hyp_path, ref_path, seed):
    rnd = random.Random(seed)
    pairs = []
    # few distinct words: many matching blocks, so the 1000 candidates run out
    for n in (60, 90):
        ref = [rnd.choice('abcde') for _ in range(n)]
        hyp = list(ref)
        for _ in range(n // 6):
            i, j = rnd.randrange(n), rnd.randrange(n)
            hyp[i], hyp[j] = hyp[j], hyp[i]
        pairs.append((hyp, ref))
    # a short hypothesis against a long reference: the band widens (slope / 2 > 25), far enough
    # to reach the first word's match
    ref = ['w%d' % i for i in range(150)]
    pairs.append(([ref[3], ref[146]], ref))
    # blocks 30 words off the diagonal: outside the band, inside the shift reach
    mid = ['m%d' % i for i in range(70)]
    pairs.append((['x%d' % i for i in range(30)] + mid, mid + ['y%d' % i for i in range(30)]))
    # a reversed sentence and a shuffled one of distinct words
    ref = ['r%d' % i for i in range(45)]
    pairs.append((ref[::-1], ref))
    hyp = list(ref)
    rnd.shuffle(hyp)
    pairs.append((hyp, ref))
    with open(hyp_path, 'w') as h, open(ref_path, 'w') as r:
        for hyp, ref in pairs:
            h.write(' '.join(hyp) + '\n')
            r.write(' '.join(ref) + '\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('hyp')
    ap.add_argument('ref')
    ap.add_argument('--write', action='store_true')
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    if a.write:
        write_cases(a.hyp, a.ref, a.seed)
        return
    with open(a.hyp) as h, open(a.ref) as r:
        for hl, rl in zip(h, r):
            hyp, ref = hl.lower().split(), rl.lower().split()
            e = edits_of(hyp, ref)
            score = 100 * (e / len(ref)) if ref else (100.0 if e else 0.0)
            print('%.10f' % score)


if __name__ == '__main__':
    main()
