#!/usr/bin/python3
# nmt2torch.py: converts an `nmt` model file (safetensors) into a checkpoint for the PyTorch
# reference (shared/peers/torch/rnnsearch.py, its load_ckpt), so that both decode the SAME model
# side by side (bench/bench_decode.sh, bench/check_nmt2torch.sh). RNNsearch and RNNencdec only.
#
# usage: /usr/bin/python3 bench/nmt2torch.py MODEL.nmt OUT.pt
#
# The nmt file: 8-byte little-endian header length, a JSON header {name: {dtype, shape,
# data_offsets}} plus "__metadata__" {format: "nmt-model", format_version: "1", config: JSON
# object, src_vocab/tgt_vocab: JSON arrays (id order)}, then the tensor bytes. nmt stores every
# weight [in, out] under the reference's own names, so the conversion is a renaming-free copy;
# every name, shape, dtype and vocabulary convention is checked and any mismatch is fatal.
import json
import math
import os
import struct
import sys

import torch

FORMAT_NAME, FORMAT_VERSION = 'nmt-model', '1'
CONFIG_KEYS = {'arch', 'src_vocab', 'tgt_vocab', 'emb', 'hid', 'att', 'maxout', 'window',
               'fert_step_w', 'fert_left_w'}
CONVERTIBLE = {'rnnsearch': False, 'rnnenc': True}      # arch -> reference cfg['encdec']
DTYPES = {'F32': (torch.float32, 4), 'F64': (torch.float64, 8)}


def die(msg):
    sys.exit('nmt2torch: error: ' + msg)


def expected_shapes(Vs, Vt, m, n, na, l, encdec):
    """The reference's tensors for cfg (Vs, Vt, m, n, na, l, encdec), weights [in, out]."""
    cd = n if encdec else 2 * n
    S = {'Es': (Vs, m)}
    for d in ('f',) if encdec else ('f', 'b'):
        S['enc_%s_W' % d] = (m, 3 * n)
        S['enc_%s_b' % d] = (3 * n,)
        S['enc_%s_U' % d] = (n, 2 * n)
        S['enc_%s_Uh' % d] = (n, n)
    S.update({'init_W': (n, n), 'init_b': (n,), 'Et': (Vt, m),
              'dec_W': (m, 3 * n), 'dec_b': (3 * n,), 'dec_U': (n, 2 * n), 'dec_Uh': (n, n),
              'dec_C': (cd, 3 * n)})
    if not encdec:
        S.update({'att_W': (n, na), 'att_U': (2 * n, na), 'att_b': (na,), 'att_v': (na,)})
    S.update({'out_U': (n, 2 * l), 'out_V': (m, 2 * l), 'out_C': (cd, 2 * l), 'out_b': (2 * l,),
              'out_W': (l, Vt), 'out_bias': (Vt,)})
    return S


def read_nmt(path):
    with open(path, 'rb') as f:
        blob = f.read()
    if len(blob) < 8:
        die('%s: too short for a safetensors file' % path)
    hlen = struct.unpack('<Q', blob[:8])[0]
    if hlen > len(blob) - 8:
        die('%s: header length %d exceeds the file (%d bytes)' % (path, hlen, len(blob)))
    try:
        header = json.loads(blob[8:8 + hlen].decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        die('%s: header is not valid JSON: %s' % (path, e))
    if not isinstance(header, dict):
        die('%s: header is not a JSON object' % path)
    meta = header.pop('__metadata__', None)
    if not isinstance(meta, dict):
        die('%s: no __metadata__ in the header (not an nmt model?)' % path)
    data = memoryview(blob)[8 + hlen:]
    return header, meta, data


def parse_meta(path, meta):
    if meta.get('format') != FORMAT_NAME:
        die('%s: not an nmt model (format %r, expected %r)' % (path, meta.get('format'), FORMAT_NAME))
    if meta.get('format_version') != FORMAT_VERSION:
        die('%s: model format version %r, this converter reads %r' % (path, meta.get('format_version'), FORMAT_VERSION))
    try:
        cfg = json.loads(meta['config'])
        sv = json.loads(meta['src_vocab'])
        tv = json.loads(meta['tgt_vocab'])
    except (KeyError, TypeError, ValueError) as e:
        die('%s: bad or missing config/vocabulary metadata: %s' % (path, e))
    if not isinstance(cfg, dict):
        die('%s: config is not a JSON object' % path)
    unknown = set(cfg) - CONFIG_KEYS
    if unknown:
        die('%s: unknown config keys %s (newer nmt format?)' % (path, sorted(unknown)))
    arch = cfg.get('arch')
    if arch not in CONVERTIBLE:
        die('%s: architecture %r has no counterpart in the reference; only %s convert'
            % (path, arch, ' and '.join(sorted(CONVERTIBLE))))
    for k in ('src_vocab', 'tgt_vocab', 'emb', 'hid', 'att', 'maxout'):
        v = cfg.get(k)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            die('%s: config %r is missing or not a positive integer: %r' % (path, k, v))
    for name, voc, size in (('source', sv, cfg['src_vocab']), ('target', tv, cfg['tgt_vocab'])):
        if not isinstance(voc, list) or not all(isinstance(w, str) for w in voc):
            die('%s: %s vocabulary is not a list of strings' % (path, name))
        if len(voc) != size:
            die('%s: %s vocabulary has %d words, the config says %d' % (path, name, len(voc), size))
        # the reference hard-codes id 0 = '</s>' (EOS) and id 1 = '<unk>'
        if voc[:2] != ['</s>', '<unk>']:
            die('%s: %s vocabulary starts %r, the reference needs ["</s>", "<unk>"]' % (path, name, voc[:2]))
        if len(set(voc)) != len(voc):
            die('%s: %s vocabulary has duplicate words' % (path, name))
    return cfg, sv, tv


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ('-h', '--help'):
        print('usage: %s MODEL.nmt OUT.pt' % os.path.basename(sys.argv[0]), file=sys.stderr)
        sys.exit(2)
    src, out = sys.argv[1], sys.argv[2]
    if sys.byteorder != 'little':
        die('this converter assumes a little-endian host')
    header, meta, data = read_nmt(src)
    cfg, sv, tv = parse_meta(src, meta)
    encdec = CONVERTIBLE[cfg['arch']]
    rcfg = dict(Vs=cfg['src_vocab'], Vt=cfg['tgt_vocab'], m=cfg['emb'], n=cfg['hid'], na=cfg['att'],
                l=cfg['maxout'], encdec=encdec)
    want = expected_shapes(rcfg['Vs'], rcfg['Vt'], rcfg['m'], rcfg['n'], rcfg['na'], rcfg['l'], encdec)

    skipped = sorted(k for k in header if k.startswith('opt.') or k.startswith('train.'))
    have = {k: v for k, v in header.items() if k not in skipped}
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    if missing or extra:
        die('%s: tensor names do not match the reference\'s %s model: missing %s, unexpected %s'
            % (src, 'RNNencdec' if encdec else 'RNNsearch', missing, extra))

    params = {}
    for name, shp in want.items():          # the reference's own order
        t = have[name]
        if not isinstance(t, dict) or t.get('dtype') not in DTYPES:
            die('%s: tensor %r: dtype %r, expected F32 or F64' % (src, name, t.get('dtype') if isinstance(t, dict) else t))
        shape = tuple(t.get('shape', ()))
        if shape != shp:
            die('%s: tensor %r has shape %s, the reference expects %s' % (src, name, list(shape), list(shp)))
        dt, size = DTYPES[t['dtype']]
        b, e = t.get('data_offsets', (None, None))
        numel = math.prod(shp)
        if not (isinstance(b, int) and isinstance(e, int) and 0 <= b <= e <= len(data)) or e - b != numel * size:
            die('%s: tensor %r: data_offsets %s do not fit %d x %d bytes in a %d-byte data section'
                % (src, name, t.get('data_offsets'), numel, size, len(data)))
        x = torch.frombuffer(bytearray(data[b:e]), dtype=dt).reshape(shp).to(torch.float32).contiguous()
        if not torch.isfinite(x).all():
            die('%s: tensor %r holds non-finite values' % (src, name))
        params[name] = x

    ck = {'cfg': rcfg, 'src_vocab': sv, 'tgt_vocab': tv, 'params': params, 'extra': {}}
    tmp = out + '.tmp'
    torch.save(ck, tmp)
    os.replace(tmp, out)
    print('nmt2torch: %s (%s, %d tensors, %d parameters%s) -> %s cfg=%s'
          % (src, cfg['arch'], len(params), sum(v.numel() for v in params.values()),
             ', skipped %d optimizer/training tensors' % len(skipped) if skipped else '', out, rcfg),
          file=sys.stderr)


if __name__ == '__main__':
    main()
