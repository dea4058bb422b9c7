#!/usr/bin/env python3
"""translate_file.py: translates a file line by line with the nmt Python package, as
`nmt translate --model MODEL < IN > OUT` does (raw text through the model's own text stages).

    build/venv/bin/python examples/translate_file.py MODEL IN OUT [--beam K] [--threads N] [--batch N]
"""
import argparse

import nmt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="+", help="model file(s); several make an ensemble")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--beam", type=int, default=12)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--batch", type=int, default=256, help="lines handed to the library per call")
    a = ap.parse_args()
    tr = nmt.Translator(a.model, threads=a.threads)
    with open(a.input, encoding="utf-8") as f, open(a.output, "w", encoding="utf-8") as out:
        lines = [line.rstrip("\n") for line in f]
        for i in range(0, len(lines), a.batch):
            for text in tr.translate(lines[i:i + a.batch], beam_size=a.beam):
                out.write(text + "\n")


if __name__ == "__main__":
    main()
