#!/usr/bin/env python3
"""plot_attention.py: translates one tokenized sentence and draws its attention as a heat map
(target tokens down, source tokens across, the EOS last), with matplotlib where it is installed;
without it the matrix is printed. `nmt plot` draws the same figure without Python.

    build/venv/bin/python examples/plot_attention.py MODEL "a man is riding a bike ." [out.png]
"""
import sys

import nmt


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tr = nmt.Translator(sys.argv[1])
    src = sys.argv[2].split()
    r = tr.translate_batch([src], beam_size=5, return_attention=True)[0]
    tgt, att = r.hypotheses[0], r.attention[0]
    if att is None:
        sys.exit("this model has no attention (RNNencdec)")
    rows, cols = tgt + ["</s>"], src + ["</s>"]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\t" + "\t".join(cols))
        for name, row in zip(rows, att):
            print(name + "\t" + "\t".join(f"{float(w):.3f}" for w in row))
        return
    fig, ax = plt.subplots(figsize=(1 + 0.5 * len(cols), 1 + 0.5 * len(rows)))
    ax.imshow([[float(w) for w in row] for row in att][:len(rows)], cmap="Greys", vmin=0, vmax=1)
    ax.set_xticks(range(len(cols)), cols, rotation=90)
    ax.set_yticks(range(len(rows)), rows)
    fig.tight_layout()
    out = sys.argv[3] if len(sys.argv) > 3 else "attention.png"
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    main()
