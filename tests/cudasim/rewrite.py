#!/usr/bin/env python3
# rewrite.py: the one mechanical change the CUDA emulation makes to the backend's sources on their
# way to g++ (docs/CUDA.md): K<<<g, b, sh, st>>>(args) becomes a call of sim_launch, and
# `extern __shared__ T name[];` the macro SIM_DYN_SHARED. Nothing else is touched.
# usage: rewrite.py IN OUT
import re
import sys

LAUNCH = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*<<<")
DYN = re.compile(r"extern\s+__shared__\s+([A-Za-z_][A-Za-z_0-9 ]*?)\s+([A-Za-z_][A-Za-z_0-9]*)\s*\[\s*\]\s*;")


def closing(text, at, open_ch, close_ch):
    """index just past the bracket that closes the one at text[at]"""
    depth = 0
    for i in range(at, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
    raise SystemExit("rewrite.py: unbalanced %s at offset %d" % (open_ch, at))


def launches(text):
    out, pos = [], 0
    for m in LAUNCH.finditer(text):
        if m.start() < pos:
            continue
        cfg_end = text.index(">>>", m.end())
        args_at = cfg_end + 3
        while text[args_at].isspace():
            args_at += 1
        if text[args_at] != "(":
            raise SystemExit("rewrite.py: a launch without arguments at offset %d" % m.start())
        args_end = closing(text, args_at, "(", ")")
        name, cfg, args = m.group(1), text[m.end():cfg_end], text[args_at + 1:args_end - 1]
        call = 'sim_launch("%s", sim_cfg(%s), [](auto... sim_p) { %s(sim_p...); }' % (name, cfg, name)
        out += [text[pos:m.start()], call, ", " + args + ")" if args.strip() else ")"]
        pos = args_end
    out.append(text[pos:])
    return "".join(out)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        text = f.read()
    text = DYN.sub(lambda m: "SIM_DYN_SHARED(%s, %s);" % (m.group(1), m.group(2)), launches(text))
    with open(dst, "w") as f:
        f.write('#line 1 "%s"\n' % src)
        f.write(text)


main()
