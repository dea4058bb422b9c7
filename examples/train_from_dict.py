#!/usr/bin/env python3
"""train_from_dict.py: trains a small model from a dict with the keys of `nmt train -c run.yaml`,
printing progress and validations from the callback, and stops early on a dev perplexity goal
(a true return value of the callback stops training: the library writes its checkpoint).

    build/venv/bin/python examples/train_from_dict.py SRC TGT DEV_SRC DEV_TGT MODEL [PPL_GOAL]
"""
import sys

import nmt


def main() -> None:
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    src, tgt, dev_src, dev_tgt, model = sys.argv[1:6]
    goal = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
    config = {
        "src": src, "tgt": tgt, "valid-src": dev_src, "valid-tgt": dev_tgt, "model": model,
        "preset": "hour", "emb": 64, "hid": 64, "att": 64, "maxout": 64, "vocab": 2000,
        "max-epochs": 2, "max-time": "10m", "valid-every": 200, "threads": 2,
    }

    def report(r):
        if r["kind"] == "progress":
            print(f"update {r['update']} epoch {r['epoch']} cost {r['cost']:.3f} {r['tok_per_s']:.0f} tok/s")
        elif r["kind"] == "valid":
            print(f"valid: dev ppl {r['dev_ppl']:.2f}{' (best)' if r['improved'] else ''}")
            return goal > 0 and r["dev_ppl"] <= goal  # True asks training to stop
        elif r["kind"] in ("save", "end", "warn"):
            print(f"{r['kind']}: {r['msg']}")
        return False

    finished = nmt.train(config, callback=report)
    print("finished" if finished else f"stopped; resume with {{'resume': '{model}.ckpt'}}")


if __name__ == "__main__":
    main()
