#!/usr/bin/python3
# replay_torch.py: trains the PyTorch reference from the same initial parameters on the same
# minibatches as an `nmt train` run (its --batch-log), so that the two implementations' dev
# perplexity curves differ only by floating-point rounding, not by seed or data order.
#
# usage: /usr/bin/python3 bench/replay_torch.py REF.py INIT.pt ORDER TRAIN_SRC TRAIN_TGT \
#            DEV_SRC DEV_TGT UPDATES [EVERY]
#   REF.py   the reference (shared/peers/torch/rnnsearch.py)
#   INIT.pt  the nmt run's initial parameters, converted with bench/nmt2torch.py
#   ORDER    the nmt run's --batch-log: one update per line, 1-based corpus line numbers. When it
#            holds fewer lines than UPDATES it is repeated, which is exact only for the paper's
#            order (shuffled once, so every epoch visits the same minibatches; not --reshuffle).
#   EVERY    dev perplexity every EVERY updates (default: the lines of ORDER, i.e. every epoch)
# Paper recipe: Adadelta (rho 0.95, eps 1e-6), clipping at 1, one thread. Prints one TSV line
# per validation: updates, dev perplexity, wall minutes.
import importlib.util
import sys
import time

import torch


def main():
    if len(sys.argv) not in (9, 10):
        sys.exit('usage: replay_torch.py REF.py INIT.pt ORDER TRAIN_SRC TRAIN_TGT DEV_SRC DEV_TGT UPDATES [EVERY]')
    ref, init, order_path, ts, tt, ds, dt = sys.argv[1:8]
    updates = int(sys.argv[8])
    spec = importlib.util.spec_from_file_location('rnnsearch', ref)
    R = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(R)
    torch.set_num_threads(1)
    P, cfg, sv, tv, _ = R.load_ckpt(init)
    P = {k: v.float().requires_grad_() for k, v in P.items()}
    S, T = R.read_tok(ts), R.read_tok(tt)
    with open(order_path) as f:
        order = [[int(w) for w in line.split()] for line in f if line.strip()]
    if not order:
        sys.exit('replay_torch: %s holds no update' % order_path)
    every = int(sys.argv[9]) if len(sys.argv) == 10 else len(order)
    cache = {}

    def pair(ln):  # 1-based line number -> (src ids, tgt ids), both ending with EOS
        if ln not in cache:
            if not 1 <= ln <= len(S):
                sys.exit('replay_torch: line %d outside %s' % (ln, ts))
            cache[ln] = (sv.encode(S[ln - 1]), tv.encode(T[ln - 1]))
        return cache[ln]

    dev = R.load_pairs(ds, dt, sv, tv, None)
    opt = {k: (torch.zeros_like(v), torch.zeros_like(v)) for k, v in P.items()}
    t0 = time.time()
    print('updates\tdev_ppl\twall_min', flush=True)
    for u in range(1, updates + 1):
        x, xm, y, ym = R.make_batch([pair(ln) for ln in order[(u - 1) % len(order)]])
        loss, _ = R.forward_train(P, cfg, x, xm, y, ym)
        loss.backward()
        R.adadelta_update(P, opt, 0.95, 1e-6, 1.0)
        if u % every == 0 or u == updates:
            ppl, _ = R.dev_ppl(P, cfg, dev)
            print('%d\t%.4f\t%.2f' % (u, ppl, (time.time() - t0) / 60), flush=True)


if __name__ == '__main__':
    main()
