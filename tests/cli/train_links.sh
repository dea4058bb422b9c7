#!/bin/sh
# train_links.sh: one model file is one run, whatever name reaches it: a run through a symbolic
# link or a hard link to a model that another run is training is refused (MODEL.lock beside the
# file itself, and a lock on the file); a save through a symbolic link writes the file it names
# and leaves the link a link.
. tests/cli/lib.sh
head -n 40 "$NMT_SHARED/data/multi30k/tok/train.en" > "$T/s"; head -n 40 "$NMT_SHARED/data/multi30k/tok/train.fr" > "$T/t"
TR="$NMT_BIN train --src $T/s --tgt $T/t --emb 4 --hid 4 --att 4 --maxout 2 --threads 1"
run() { $TR "$@"; }
run --model "$T/m.nmt" --max-updates 2 2> /dev/null && ok || bad "first run"
ln -s m.nmt "$T/sym.nmt"
ln "$T/m.nmt" "$T/hard.nmt"
# shellcheck disable=SC2086
$TR --model "$T/m.nmt" --max-updates 100000 --save-every 100000 --overwrite 2> /dev/null &
pid=$!
i=0; while [ ! -e "$T/m.nmt.lock" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
expect_fail "through a symbolic link" 1 "m\.nmt is in use by another process" run --model "$T/sym.nmt" --max-updates 2 --overwrite
expect_fail "through a hard link" 1 "hard\.nmt is in use by another process, under another name" \
    run --model "$T/hard.nmt" --max-updates 2 --overwrite
kill $pid 2> /dev/null; wait $pid 2> /dev/null
[ -z "$(ls "$T" | grep '\.lock$')" ] && ok || bad "a lock file outlived its run: $(ls "$T")"
# a save through the link: the link stays, the file it names is the new model
rm -f "$T/m.nmt.ckpt" "$T/sym.nmt.ckpt"
cp "$T/m.nmt" "$T/before"
run --model "$T/sym.nmt" --max-updates 2 --seed 9 --overwrite 2> "$T/err" && ok || bad "training through the link: $(cat "$T/err")"
[ -L "$T/sym.nmt" ] && ok || bad "the save replaced the symbolic link by a file"
cmp -s "$T/m.nmt" "$T/before" && bad "the file the link names was not written" || ok
cmp -s "$T/m.nmt" "$T/sym.nmt" && ok || bad "the link does not name the new model"
finish train_links
