#!/usr/bin/env python3
"""layers.py ROOT [OBJDIR]: every #include of src/ (C, C++ and CUDA), tools/, python/src/ and
fuzz/ under ROOT, and with OBJDIR every
call and variable reference between its objects, runs down the layer table of
ROOT/docs/ARCHITECTURE.md ("The layers and the data flow"); and no files of one folder call one
another in a circle. Prints one line per fault (FILE:LINE: what) and exits 1 when there is one.

The table's second column says what a layer is built on: layers by name, comma-separated, or
"—"; a layer may use those and, through them, what they are built on. After a ";", "X, Y through
nmt.h" names layers it reaches through the public API alone: calls into their nmt_* functions,
no include of their headers (nmt.h itself any layer may include)."""
import os
import re
import subprocess
import sys

ROW = re.compile(r"^\|\s*`(src/[a-z]+|tools|python/src|fuzz)/?`\s*\|([^|]*)\|")
# the folders read besides src/'s layers, and the layer name each has in the table
CLIENTS = {"tools": "tools", "python/src": "python", "fuzz": "fuzz"}
SUFFIXES = (".c", ".h", ".cc", ".cu")


def read_table(root):
    """{layer: (full, public)}: the layers each row names, before and after its ';'."""
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    table, inside = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                inside = line.startswith("## The layers")
            m = ROW.match(line) if inside else None
            if not m:
                continue
            name = CLIENTS.get(m.group(1), m.group(1).split("/")[-1])
            full, _, public = m.group(2).partition(";")
            public = public.replace("through nmt.h", "")
            table[name] = tuple({w.strip(" `") for w in part.split(",")} - {"", "—"} for part in (full, public))
    return table


def closure(table, names):
    """names and every layer they are built on, transitively."""
    seen, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(table.get(n, (set(), set()))[0])
    return seen


def layer_of(rel):
    """The layer of a path relative to ROOT (src/LAYER/... or tools/...), or None."""
    parts = rel.split(os.sep)
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    for top, name in CLIENTS.items():
        if rel.startswith(top + os.sep):
            return name
    return None


def sources(root):
    for top in ("src",) + tuple(CLIENTS):
        for d, dirs, files in sorted(os.walk(os.path.join(root, top))):
            if top == "fuzz":
                dirs[:] = []  # its corpus and regressions are inputs, not code
            for f in sorted(files):
                if f.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(d, f), root)


def check_includes(root, table, faults):
    for rel in sources(root):
        me = layer_of(rel)
        if me not in table:
            faults.append("%s: its folder has no row in the layer table" % rel)
            continue
        below = closure(table, table[me][0]) | {me}
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m or m.group(1) == "nmt.h":
                    continue
                inc = m.group(1)
                if "/" not in inc and os.path.exists(os.path.join(root, os.path.dirname(rel), inc)):
                    continue  # a header beside the file
                target = inc.split("/")[0] if "/" in inc else None
                if target not in table:
                    faults.append("%s:%d: includes \"%s\", which is in no layer" % (rel, no, inc))
                elif target not in below:
                    faults.append("%s:%d: %s includes %s, a layer it is not built on" % (rel, no, me, inc))


def symbols(root, objdir):
    """(defined {symbol: object}, used [(object, symbol)]) over OBJDIR's src/ and tools/ objects
    whose source is in ROOT (an object left from a file since moved is not the code's)."""
    defined, used = {}, []
    for top in ("src", "tools"):
        for d, _, files in sorted(os.walk(os.path.join(objdir, top))):
            for f in sorted(files):
                if not f.endswith(".o"):
                    continue
                obj = os.path.join(d, f)
                rel = os.path.relpath(obj, objdir)
                if not any(os.path.exists(os.path.join(root, rel[:-2] + e)) for e in (".c", ".cc")):
                    continue
                out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    w = line.split()
                    if len(w) >= 2 and w[1] == "U":
                        used.append((rel, w[0]))
                    elif len(w) >= 2 and w[1] in "TDBRV":
                        defined[w[0]] = rel
    return defined, used


def check_calls(root, objdir, table, faults):
    defined, used = symbols(root, objdir)
    edges = {}
    for rel, sym in used:
        where = defined.get(sym)
        if not where or where == rel:
            continue
        me, it = layer_of(rel), layer_of(where)
        if os.path.dirname(rel) == os.path.dirname(where):
            edges.setdefault(rel, {}).setdefault(where, sym)
        if me == it or me not in table:
            continue
        full, public = table[me]
        if it in closure(table, full) or (sym.startswith("nmt_") and it in closure(table, public)):
            continue
        faults.append("%s: %s calls %s (%s), a layer it is not built on" % (rel, me, sym, where))
    for cycle in circles(edges):
        faults.append("%s: files of one folder call one another in a circle (%s)"
                      % (os.path.dirname(cycle[0][0]), " -> ".join("%s %s" % (os.path.basename(a), s) for a, s in cycle)))


def circles(edges):
    """One circle per strongly connected set of files, as [(file, symbol it calls in the next)]."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(walk(edges, comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def walk(edges, comp):
    """A circle through comp, from its first file back to it."""
    start = min(comp)
    path, seen, v = [], {}, start
    while v not in seen:
        seen[v] = len(path)
        w = min(x for x in edges[v] if x in comp)
        path.append((v, edges[v][w]))
        v = w
    return path[seen[v]:]


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    root = argv[1]
    table = read_table(root)
    if not table:
        print("%s/docs/ARCHITECTURE.md: no layer table" % root)
        return 1
    faults = []
    check_includes(root, table, faults)
    if len(argv) == 3:
        check_calls(root, argv[2], table, faults)
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
