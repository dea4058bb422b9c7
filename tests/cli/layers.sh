#!/bin/sh
# layers.sh: every include and call of src/ and tools/ runs down the layer table of
# docs/ARCHITECTURE.md, and no files of one folder call one another in a circle
# (tests/cli/layers.py). First the checker on a made-up tree whose faults are known, then on this
# tree: its sources, and the objects of the build under test (NMT_TEST_DIR's parent).
. tests/cli/lib.sh
D=$T/tree; O=$T/obj
mkdir -p "$D/docs" "$D/src/base" "$D/src/text" "$D/src/data" "$D/src/serve" "$D/src/x" "$D/tools"
cat > "$D/docs/ARCHITECTURE.md" <<'MD'
## The layers and the data flow
| folder | built on | layer | what lives there |
|---|---|---|---|
| `src/base` | — | foundation | b |
| `src/text` | base | text | t |
| `src/data` | text | ids | d |
| `src/serve` | base; data through nmt.h | serving | s |
| `tools/` | data, serve | the program | m |
## Elsewhere
| `src/x` | base | not the layer table | y |
MD
printf 'int b_one(void);\n' > "$D/src/base/b.h"
printf '#include "base/b.h"\nint b_one(void) { return 1; }\n' > "$D/src/base/b.c"
printf '#include "nmt.h"\n#include "text/t.h"\n' > "$D/src/base/up.h"
printf 'int nmt_d(void);\nint b_two(void) { return nmt_d(); }\n' > "$D/src/base/b2.c"
printf 'int t_two(void);\n' > "$D/src/text/t.h"
printf '#include "base/b.h"\n#include "t.h"\nint t_four(void);\nint t_two(void) { return b_one() + t_four(); }\n' > "$D/src/text/t.c"
printf 'int t_two(void);\nint t_three(void) { return 3; }\nint t_four(void) { return t_three() + t_two(); }\n' > "$D/src/text/t2.c"
printf 'int nmt_d(void);\nint d_priv(void);\n' > "$D/src/data/d.h"
printf '#include "text/t.h"\n#include "data/d.h"\nint nmt_d(void) { return t_two(); }\nint d_priv(void) { return 0; }\n' > "$D/src/data/d.c"
printf '#include "base/b.h"\n#include "data/d.h"\nint s_one(void) { return b_one() + nmt_d() + d_priv(); }\n' > "$D/src/serve/s.c"
printf 'int y;\n' > "$D/src/x/y.c"
printf '#include "data/d.h"\n#include "nope/z.h"\n' > "$D/tools/m.h"
for c in $(cd "$D" && find src tools -name '*.c'); do
    mkdir -p "$O/$(dirname "$c")"
    cc -c -I"$D/src" -o "$O/${c%.c}.o" "$D/$c" || bad "compiling the made-up $c"
done
python3 tests/cli/layers.py "$D" "$O" > "$T/got"; rc=$?
[ "$rc" = 1 ] && ok || bad "exit $rc on a tree with faults, want 1"
sort > "$T/want" <<'WANT'
src/base/b2.o: base calls nmt_d (src/data/d.o), a layer it is not built on
src/base/up.h:2: base includes text/t.h, a layer it is not built on
src/serve/s.c:2: serve includes data/d.h, a layer it is not built on
src/serve/s.o: serve calls d_priv (src/data/d.o), a layer it is not built on
src/text: files of one folder call one another in a circle (t.o t_four -> t2.o t_two)
src/x/y.c: its folder has no row in the layer table
tools/m.h:2: includes "nope/z.h", which is in no layer
WANT
sort "$T/got" | diff "$T/want" - > "$T/diff" && ok || bad "the checker on the made-up tree: $(cat "$T/diff")"
# this tree: with the objects of the build under test when there are any
B=$(dirname "${NMT_TEST_DIR:-build/tests}")
if [ -d "$B/src" ]; then set -- "$B"; else echo "layers: no objects in $B/src: includes only"; set --; fi
python3 tests/cli/layers.py . "$@" > "$T/real" && ok || bad "the layers of this tree: $(cat "$T/real")"
finish layers
