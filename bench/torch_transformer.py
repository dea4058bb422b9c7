#!/usr/bin/python3
# torch_transformer.py: nmt's Transformer (--arch transformer) written again in PyTorch from
# docs/MODEL-MAP.md's equations, to check the C code: the loss and every gradient on the same
# parameters and batch (dumps of tests/test_tf_torch_f64.c), and greedy and beam output of a
# trained model file. Run by tests/cli/torch_transformer.sh.
#
# usage: torch_transformer.py check DUMPDIR [--tol 1e-5]
#        torch_transformer.py translate MODEL.nmt [--beam K] [--no-length-norm]
#                             [--length-penalty A] [--max-ratio R] < tokenized text
#        torch_transformer.py train-speed MODEL.nmt --src F --tgt F --batch-log F [--updates N ...]
#        torch_transformer.py decode-speed MODEL.nmt --src F [-n N] [--beams 1 12] --out-prefix P
# (the last two for bench/bench_transformer.sh: float32 speed on nmt's shapes and threads)
#
# A dump (DIR/NAME.json + DIR/NAME.bin): the config, the batch (time-major: x[t*B + b]), the
# summed loss, and the tensors' names, shapes and offsets into the .bin, which holds every
# parameter, then every gradient, as little-endian float64 in one flat array each.
import argparse
import glob
import json
import math
import os
import struct
import sys
import time

import torch

EOS, UNK = 0, 1


class Config:
    """The equations' switches, from a dump's config or a model file's."""

    def __init__(self, src_vocab, tgt_vocab, d, enc_depth, dec_depth, heads, ffn, act, post, max_pos, eps, tied):
        self.src_vocab, self.tgt_vocab, self.d = src_vocab, tgt_vocab, d
        self.enc_depth, self.dec_depth, self.heads, self.ffn = enc_depth, dec_depth, heads, ffn
        self.act, self.post, self.max_pos, self.eps, self.tied = act, post, max_pos, eps, tied

    @staticmethod
    def from_dump(c):
        return Config(c['src_vocab'], c['tgt_vocab'], c['emb'], c['enc_depth'], c['dec_depth'], c['heads'], c['ffn'],
                      c['ffn_activation'], c['norm'] == 'post', c['max_positions'], c['ln_eps'], c['tied_emb'])

    @staticmethod
    def from_model(c):
        t = c['transformer']
        tied = 2 if t['tied_all'] else 1 if c.get('tied_embeddings') else 0
        return Config(c['src_vocab'], c['tgt_vocab'], c['emb'], t['enc_depth'], t['dec_depth'], t['heads'], t['ffn'],
                      t['ffn_activation'], t['norm'] == 'post', t['max_positions'], t['ln_eps'], tied)


class Transformer:
    """The model as functions of a dict of named tensors (nmt's names, weights [in, out])."""

    def __init__(self, cfg, params):
        self.c, self.p = cfg, params

    def vec(self, name):
        return self.p[name].reshape(-1)

    # positions -----------------------------------------------------------------------------
    def positions(self, side, T, like):
        d = self.c.d
        if self.c.max_pos:
            # learned: one row per position, the last row for every position past it
            idx = torch.clamp(torch.arange(T), max=self.c.max_pos - 1)
            return self.p[side + '_Wpos'][idx]
        h = d // 2
        w = torch.exp(-torch.arange(h, dtype=torch.float64) * (math.log(10000.0) / (h - 1) if h > 1 else 0.0))
        ang = torch.arange(T, dtype=torch.float64)[:, None] * w[None, :]
        P = torch.cat([torch.sin(ang), torch.cos(ang)], dim=1)
        if d % 2:
            P = torch.cat([P, torch.zeros(T, 1, dtype=torch.float64)], dim=1)
        return P.to(like.dtype)

    def src_emb(self):
        return self.p['Et'] if self.c.tied == 2 else self.p['Es']

    # blocks --------------------------------------------------------------------------------
    def ln(self, x, pre):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased
        return self.vec(pre + '_ln_scale') * (x - mu) / torch.sqrt(var + self.c.eps) + self.vec(pre + '_ln_bias')

    def attend(self, q, k, v, mask, pre):
        """Multi-head attention of q [B,Tq,d] over k, v [B,Tk,d]; mask [B,Tq,Tk] True where a key is seen."""
        B, Tq, d = q.shape
        h = self.c.heads
        dk = d // h
        split = lambda z: z.reshape(B, z.shape[1], h, dk).transpose(1, 2)  # [B,h,T,dk]
        s = split(q) @ split(k).transpose(-1, -2) / math.sqrt(dk)
        s = s.masked_fill(~mask[:, None], float('-inf'))
        a = torch.softmax(s, dim=-1) @ split(v)
        a = a.transpose(1, 2).reshape(B, Tq, d)
        return a @ self.p[pre + '_Wo'] + self.vec(pre + '_bo')

    def self_att(self, x, mask, pre):
        qkv = x @ self.p[pre + '_Wqkv'] + self.vec(pre + '_bqkv')
        d = self.c.d
        return self.attend(qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:], mask, pre)

    def ctx_att(self, x, H, mask, pre):
        q = x @ self.p[pre + '_Wq'] + self.vec(pre + '_bq')
        kv = H @ self.p[pre + '_Wkv'] + self.vec(pre + '_bkv')
        d = self.c.d
        return self.attend(q, kv[..., :d], kv[..., d:], mask, pre)

    def ffn(self, x, pre):
        z = x @ self.p[pre + '_W1'] + self.vec(pre + '_b1')
        if self.c.act == 'relu':
            z = torch.relu(z)
        elif self.c.act == 'gelu':
            z = 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))
        elif self.c.act == 'swish':
            z = z * torch.sigmoid(z)
        else:
            raise ValueError('activation ' + self.c.act)
        return z @ self.p[pre + '_W2'] + self.vec(pre + '_b2')

    def block(self, x, f, pre):
        """x + f(LN(x)) with pre-norm, LN(x + f(x)) with post-norm (f reads the norm's name)."""
        if self.c.post:
            return self.ln(x + f(x), pre)
        return x + f(self.ln(x, pre))

    # stacks --------------------------------------------------------------------------------
    def encode(self, x, xlen):
        """x [B,Tx] ids (EOS included), xlen [B]: H [B,Tx,d] and the key mask [B,Tx]."""
        B, Tx = x.shape
        E = self.src_emb()
        h = math.sqrt(self.c.d) * E[x] + self.positions('enc', Tx, E)
        keys = torch.arange(Tx)[None, :] < xlen[:, None]
        m = keys[:, None, :].expand(B, Tx, Tx)
        for l in range(1, self.c.enc_depth + 1):
            pre = 'enc_l%d_' % l
            h = self.block(h, lambda a: self.self_att(a, m, pre + 'self'), pre + 'self')
            h = self.block(h, lambda a: self.ffn(a, pre + 'ffn'), pre + 'ffn')
        if not self.c.post:
            h = self.ln(h, 'enc_top')
        return h, keys

    def decode(self, yprev, H, keys):
        """yprev [B,T] the previous words (-1 at t = 0: the zero row): the top states [B,T,d]."""
        B, T = yprev.shape
        Et = self.p['Et']
        w = Et[yprev.clamp(min=0)] * (yprev >= 0)[..., None].to(Et.dtype)
        h = math.sqrt(self.c.d) * w + self.positions('dec', T, Et)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None].expand(B, T, T)
        cm = keys[:, None, :].expand(B, T, keys.shape[1])
        for l in range(1, self.c.dec_depth + 1):
            pre = 'dec_l%d_' % l
            h = self.block(h, lambda a: self.self_att(a, causal, pre + 'self'), pre + 'self')
            h = self.block(h, lambda a: self.ctx_att(a, H, cm, pre + 'ctx'), pre + 'ctx')
            h = self.block(h, lambda a: self.ffn(a, pre + 'ffn'), pre + 'ffn')
        if not self.c.post:
            h = self.ln(h, 'dec_top')
        return h

    def logp(self, s):
        W = self.p['Et'].t() if self.c.tied else self.p['out_W']
        return torch.log_softmax(s @ W + self.vec('out_bias'), dim=-1)

    def loss(self, x, xlen, y, ylen, eps=0.0):
        """The summed loss over the real target tokens (EOS included), label smoothing eps."""
        H, keys = self.encode(x, xlen)
        B, Ty = y.shape
        yprev = torch.cat([torch.full((B, 1), -1, dtype=y.dtype), y[:, :-1]], dim=1)
        lp = self.logp(self.decode(yprev, H, keys))
        nll = -lp.gather(-1, y[..., None])[..., 0]
        if eps:
            nll = (1 - eps) * nll + eps * (-lp).mean(-1)
        real = torch.arange(Ty)[None, :] < ylen[:, None]
        return (nll * real.to(nll.dtype)).sum()


# the gradient check ----------------------------------------------------------------------------
def check(dumpdir, tol, perturb):
    files = sorted(glob.glob(os.path.join(dumpdir, '*.json')))
    if not files:
        sys.exit('torch_transformer: no dumps in %s' % dumpdir)
    bad = ncmp = 0
    worst = 0.0
    for jf in files:
        with open(jf) as f:
            m = json.load(f)
        n = m['total']
        with open(jf[:-5] + '.bin', 'rb') as f:
            blob = f.read()
        if len(blob) != 16 * n:
            sys.exit('torch_transformer: %s.bin has %d bytes, expected %d' % (jf[:-5], len(blob), 16 * n))
        flat = torch.tensor(struct.unpack('<%dd' % (2 * n), blob), dtype=torch.float64)
        cfg = Config.from_dump(m['config'])
        params, cgrad = {}, {}
        for t in m['tensors']:
            k, r, c = t['offset'], t['rows'], t['cols']
            params[t['name']] = flat[k:k + r * c].reshape(r, c).clone().requires_grad_(True)
            cgrad[t['name']] = flat[n + k:n + k + r * c].reshape(r, c)
        b = m['batch']
        B, Tx, Ty = b['B'], b['Tx'], b['Ty']
        x = torch.tensor(b['x']).reshape(Tx, B).t().contiguous()
        y = torch.tensor(b['y']).reshape(Ty, B).t().contiguous()
        xlen, ylen = torch.tensor(b['xlen']), torch.tensor(b['ylen'])
        model = Transformer(cfg, params)
        L = model.loss(x, xlen, y, ylen, m['label_smoothing'])
        L.backward()
        rel = abs(L.item() - m['loss']) / abs(m['loss'])
        ncmp += 1
        if rel > tol:
            bad += 1
            print('FAIL %s: loss C %.15g, torch %.15g (relative %.2e)' % (m['name'], m['loss'], L.item(), rel))
        worst_case, worst_name = rel, 'loss'
        for name, g in cgrad.items():
            tg = params[name].grad
            if tg is None:
                tg = torch.zeros_like(g)
            if perturb == name:  # to see the check fail: one element of C's gradient moved by 1e-4 relative
                g = g.clone()
                g.view(-1)[0] *= 1 + 1e-4
            # relative to each element, with a floor at 1e-6 of the tensor's largest (an element
            # that is zero up to rounding is compared on the tensor's scale)
            floor = 1e-6 * max(tg.abs().max().item(), 1e-300)
            err = ((g - tg).abs() / torch.clamp(tg.abs(), min=floor)).max().item()
            ncmp += 1
            if err > tol:
                bad += 1
                i = int(((g - tg).abs() / torch.clamp(tg.abs(), min=floor)).argmax())
                print('FAIL %s: gradient of %s: relative %.2e at element %d (C %.15g, torch %.15g)'
                      % (m['name'], name, err, i, g.view(-1)[i].item(), tg.reshape(-1)[i].item()))
            if err > worst_case:
                worst_case, worst_name = err, name
        missing = set(params) - set(cgrad)
        if missing:
            bad += 1
            print('FAIL %s: tensors without a C gradient: %s' % (m['name'], sorted(missing)))
        print('%s: loss %.15g (C %.15g), %d gradients, largest relative difference %.2e (%s)'
              % (m['name'], L.item(), m['loss'], len(cgrad), worst_case, worst_name))
        worst = max(worst, worst_case)
    print('torch check: %d cases, %d comparisons, %d off, largest relative difference %.2e' % (len(files), ncmp, bad, worst))
    return bad


# decoding --------------------------------------------------------------------------------------
def read_model(path):
    """An nmt model file (safetensors): its config, vocabularies and float64 tensors by name."""
    with open(path, 'rb') as f:
        blob = f.read()
    hlen = struct.unpack('<Q', blob[:8])[0]
    header = json.loads(blob[8:8 + hlen].decode('utf-8'))
    meta = header.pop('__metadata__')
    if meta.get('format') != 'nmt-model':
        sys.exit('torch_transformer: %s is not an nmt model' % path)
    cfg = json.loads(meta['config'])
    if cfg.get('arch') != 'transformer':
        sys.exit('torch_transformer: %s is a %s model, not a transformer' % (path, cfg.get('arch')))
    data = blob[8 + hlen:]
    kinds = {'F32': ('f', 4), 'F64': ('d', 8)}
    params = {}
    for name, t in header.items():
        if t['dtype'] not in kinds:
            sys.exit('torch_transformer: %s: tensor %s has dtype %s' % (path, name, t['dtype']))
        code, size = kinds[t['dtype']]
        a, b = t['data_offsets']
        vals = struct.unpack('<%d%s' % ((b - a) // size, code), data[a:b])
        params[name] = torch.tensor(vals, dtype=torch.float64).reshape(t['shape'])
    return Config.from_model(cfg), json.loads(meta['src_vocab']), json.loads(meta['tgt_vocab']), params


def best_pairs(score, need):
    """The flat indices of the need best scores, best first, the lower flat index (row, word)
    first among equals: a full sort's first need, found by sorting only the scores at or above
    the need-th largest (sorting all K x V of them in Python costs more than the model's step)."""
    need = min(need, score.numel())
    cut = torch.topk(score, need).values[-1]
    cand = torch.nonzero(score >= cut).reshape(-1).tolist()
    return sorted(cand, key=lambda i: (-score[i].item(), i))[:need]


def beam_search(model, src, K, normalize, alpha, max_ratio):
    """One sentence's best hypothesis as nmt's beam search finds it (src/decode/beam.c): at each
    step the best K - finished (hypothesis, word) pairs by summed log-probability, ties to the
    lower (row, word); EOS finishes a hypothesis; the search ends when K have finished, none is
    live or the length limit max(1, floor(max_ratio × source length with EOS)) is reached, the live
    ones then competing as they are; ranked by log-probability (/ length^alpha with normalize),
    ties to the earlier finished. K = 1 is greedy."""
    x = torch.tensor([src])
    H, keys = model.encode(x, torch.tensor([len(src)]))
    maxlen = max(1, int(math.floor(max_ratio * len(src) + 1e-9)))
    live = [([], 0.0)]
    fin = []
    for t in range(maxlen):
        need = K - len(fin)
        yprev = torch.tensor([[-1] + toks for toks, _ in live])
        n = len(live)
        lp = model.logp(model.decode(yprev, H.expand(n, -1, -1), keys.expand(n, -1)))[:, -1, :]
        V = lp.shape[1]
        score = (torch.tensor([s for _, s in live], dtype=torch.float64)[:, None] + lp).reshape(-1)
        order = best_pairs(score, need)
        nxt = []
        for i in order:
            r, v = divmod(i, V)
            hyp = (live[r][0] + [v], score[i].item())
            (fin if v == EOS else nxt).append(hyp)
        if len(fin) >= K or not nxt or t + 1 >= maxlen:
            fin += nxt
            break
        live = nxt
    rank = lambda h: h[1] / (len(h[0]) if alpha == 1 else len(h[0]) ** alpha) if normalize else h[1]
    best = sorted(range(len(fin)), key=lambda i: (-rank(fin[i]), i))[0]
    return fin[best][0]


def translate(args):
    cfg, sv, tv, params = read_model(args.model)
    model = Transformer(cfg, params)
    sid = {w: i for i, w in enumerate(sv)}
    with torch.no_grad():
        for line in sys.stdin:
            src = [sid.get(w, UNK) for w in line.split()] + [EOS]
            out = beam_search(model, src, args.beam, args.normalize, args.length_penalty, args.max_ratio)
            print(' '.join(tv[v] for v in out if v != EOS))


# speed, for bench/bench_transformer.sh --------------------------------------------------------
def read_lines(path, wanted):
    """The lines of a file whose 1-based numbers are in wanted, split into words."""
    out = {}
    with open(path, encoding='utf-8') as f:
        for i, line in enumerate(f, 1):
            if i in wanted:
                out[i] = line.split()
    return out


def train_speed(args):
    """nmt's own batches (its --batch-log: 1-based corpus line numbers, one update a line) through
    the same model in float32 with autograd and Adam: the shapes of each update, hence its FLOPs
    and target tokens, are nmt's. The model file gives the config, the vocabularies and the
    starting weights (those of the nmt run that wrote the log; which values they hold does not
    change the work)."""
    cfg, sv, tv, params = read_model(args.model)
    params = {k: v.float().requires_grad_(True) for k, v in params.items()}
    model = Transformer(cfg, params)
    with open(args.batch_log) as f:
        batches = [[int(w) for w in line.split()] for line in f if line.strip()]
    batches = batches[:args.warmup + args.updates]
    if len(batches) < args.warmup + args.updates:
        sys.exit('torch_transformer: %s has %d updates, fewer than --warmup %d + --updates %d'
                 % (args.batch_log, len(batches), args.warmup, args.updates))
    wanted = set(i for b in batches for i in b)
    src, tgt = read_lines(args.src, wanted), read_lines(args.tgt, wanted)
    sid, tid = {w: i for i, w in enumerate(sv)}, {w: i for i, w in enumerate(tv)}

    def tensors(batch, lines, ids):
        # ids with EOS, right-padded with EOS (masked by the lengths)
        seqs = [[ids.get(w, UNK) for w in lines[i]] + [EOS] for i in batch]
        T = max(len(q) for q in seqs)
        return (torch.tensor([q + [EOS] * (T - len(q)) for q in seqs]), torch.tensor([len(q) for q in seqs]))

    data = []
    for batch in batches:
        x, xlen = tensors(batch, src, sid)
        y, ylen = tensors(batch, tgt, tid)
        data.append((x, xlen, y, ylen))
    opt = torch.optim.Adam(list(params.values()), lr=args.lr)
    t0, tok = 0.0, 0
    for u, (x, xlen, y, ylen) in enumerate(data):
        if u == args.warmup:
            t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        # nmt's batch cost: the summed loss over the batch's sentences
        L = model.loss(x, xlen, y, ylen, args.label_smoothing) / x.shape[0]
        L.backward()
        if args.clip > 0:
            torch.nn.utils.clip_grad_norm_(list(params.values()), args.clip)
        opt.step()
        if u >= args.warmup:
            tok += int(ylen.sum())
    sec = time.perf_counter() - t0
    print('TRAIN updates=%d tgt_tok=%d sec=%.6f tok_s=%.1f threads=%d' % (args.updates, tok, sec, tok / sec, args.threads))


def decode_speed(args):
    """Sentences/s of beam_search at each beam over the first N lines, one sentence at a time,
    the model's weights in float32 (as nmt decodes; --float64 for the exact search of translate);
    writes each beam's output to PREFIX.bK so that the caller compares them with nmt's."""
    cfg, sv, tv, params = read_model(args.model)
    dtype = torch.float64 if args.float64 else torch.float32
    model = Transformer(cfg, {k: v.to(dtype) for k, v in params.items()})
    sid = {w: i for i, w in enumerate(sv)}
    with open(args.src, encoding='utf-8') as f:
        srcs = [[sid.get(w, UNK) for w in line.split()] + [EOS] for _, line in zip(range(args.n), f)]
    with torch.no_grad():
        for K in args.beams:
            for s in srcs[:args.warmup]:  # first calls allocate and pick kernels
                beam_search(model, s, K, True, 1.0, args.max_ratio)
            outs = []
            t0 = time.perf_counter()
            for s in srcs:
                outs.append(beam_search(model, s, K, True, 1.0, args.max_ratio))
            sec = time.perf_counter() - t0
            with open('%s.b%d' % (args.out_prefix, K), 'w', encoding='utf-8') as f:
                for out in outs:
                    f.write(' '.join(tv[v] for v in out if v != EOS) + '\n')
            tok = sum(len(o) for o in outs)
            print('DECODE beam=%d sents=%d sec=%.6f sent_s=%.3f out_tok=%d threads=%d'
                  % (K, len(srcs), sec, len(srcs) / sec, tok, args.threads))


def main():
    ap = argparse.ArgumentParser(description='nmt\'s Transformer in PyTorch: gradient check and decoding')
    sub = ap.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('check', help='compare with the dumps of tests/test_tf_torch_f64.c')
    c.add_argument('dumpdir')
    c.add_argument('--tol', type=float, default=1e-5)
    c.add_argument('--perturb', default='', help='move one element of this tensor\'s C gradient (to see the check fail)')
    t = sub.add_parser('translate', help='decode stdin with a model file, as nmt translate')
    t.add_argument('model')
    t.add_argument('--beam', type=int, default=12)
    t.add_argument('--no-length-norm', dest='normalize', action='store_false')
    t.add_argument('--length-penalty', type=float, default=1.0)
    t.add_argument('--max-ratio', type=float, default=3.0)
    r = sub.add_parser('train-speed', help='target tokens/s of training on nmt\'s batches (its --batch-log)')
    r.add_argument('model', help='an nmt model file of the shapes to train (config, vocabularies, start weights)')
    r.add_argument('--src', required=True)
    r.add_argument('--tgt', required=True)
    r.add_argument('--batch-log', required=True, help='nmt train --batch-log: corpus line numbers of each update')
    r.add_argument('--warmup', type=int, default=3, help='untimed updates first')
    r.add_argument('--updates', type=int, default=20, help='timed updates')
    r.add_argument('--lr', type=float, default=0.001)
    r.add_argument('--clip', type=float, default=1.0, help='gradient norm clip (0: none)')
    r.add_argument('--label-smoothing', type=float, default=0.0)
    r.add_argument('--threads', type=int, default=2)
    d = sub.add_parser('decode-speed', help='sentences/s of the beam search at each beam')
    d.add_argument('model')
    d.add_argument('--src', required=True, help='tokenized source text')
    d.add_argument('-n', type=int, default=100, help='first N lines')
    d.add_argument('--beams', type=int, nargs='+', default=[1, 12])
    d.add_argument('--max-ratio', type=float, default=3.0)
    d.add_argument('--warmup', type=int, default=3, help='sentences decoded untimed before each beam')
    d.add_argument('--float64', action='store_true', help='decode in float64, as translate does')
    d.add_argument('--out-prefix', required=True)
    d.add_argument('--threads', type=int, default=2)
    a = ap.parse_args()
    if a.cmd in ('train-speed', 'decode-speed'):
        # the benchmark's thread count, the same as nmt's; float32 as nmt computes
        torch.set_num_threads(a.threads)
        sys.exit(train_speed(a) if a.cmd == 'train-speed' else decode_speed(a))
    torch.set_default_dtype(torch.float64)
    # tiny tensors: one thread (more only wait on each other, and on a shared machine spin)
    torch.set_num_threads(1)
    if a.cmd == 'check':
        sys.exit(1 if check(a.dumpdir, a.tol, a.perturb) else 0)
    translate(a)


if __name__ == '__main__':
    main()
