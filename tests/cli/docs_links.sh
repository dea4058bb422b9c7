#!/bin/sh
# docs_links.sh: every markdown link, every docs/*.md page (and "section") a comment or a page
# names, resolves in this tree; the product names no lab/ and the docs no ticket number
# (tests/cli/doc_refs.py). First the checker itself, on a made-up tree whose faults are known.
. tests/cli/lib.sh
D=$T/tree; mkdir -p "$D/docs" "$D/src" "$D/lab"
cat > "$D/docs/b.md" <<'MD'
# B
## The `first` section
MD
cat > "$D/docs/a.md" <<'MD'
[b](b.md) [gone](gone.md) [s](b.md#the-first-section) [t](b.md#nope) [web](https://example.org/x)
see docs/b.md, "The first section" and docs/b.md, "No such section"
as issue 12 said, lab/runs/x
MD
cat > "$D/src/x.c" <<'C'
/* good: docs/b.md, "The first
 * section"; wrapped and wrong: docs/b.md, "The second
 * section"; docs/none.md; lab/queue.sh */
C
printf 'the lab/ folder; session 3\n' > "$D/README.md"
printf 'issue 5 [old](../docs/b.md) [lost](runs/x.tsv)\n' > "$D/lab/J.md"
python3 tests/cli/doc_refs.py "$D" > "$T/got"; rc=$?
[ "$rc" = 1 ] && ok || bad "exit $rc on a tree with broken references, want 1"
sort > "$T/want" <<'WANT'
README.md:1: a ticket number: session 3
docs/a.md:1: link to a missing file: gone.md
docs/a.md:1: link to a missing heading: b.md#nope
docs/a.md:2: names a missing section of docs/b.md: "No such section"
docs/a.md:3: a ticket number: issue 12
docs/a.md:3: the product names lab/
lab/J.md:1: link to a missing file: runs/x.tsv
src/x.c:2: names a missing section of docs/b.md: "The second section"
src/x.c:3: names a missing page: docs/none.md
src/x.c:3: the product names lab/
WANT
sort "$T/got" | diff "$T/want" - > "$T/diff" && ok || bad "the checker on the made-up tree: $(cat "$T/diff")"
# the tree itself
python3 tests/cli/doc_refs.py . > "$T/real" && ok || bad "broken references: $(cat "$T/real")"
finish docs_links
