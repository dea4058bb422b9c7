#!/bin/sh
# train_errors.sh: bad input to `nmt train` and `nmt vocab` is caught before training starts,
# named (file, line, counts), and gives the documented exit status: 2 for usage, 1 for data.
. tests/cli/lib.sh
printf 'a b c\nd e\nf\n' > "$T/s3"
printf 'x y\nz\n' > "$T/t2"
printf 'x y\nz\nw\n' > "$T/t3"
printf 'ok line\nbad \377 byte\nfine\n' > "$T/bad_utf8"
printf '\n\n\n' > "$T/empty3"
SMALL="--emb 4 --hid 4 --att 4 --maxout 2 --vocab 10 --max-updates 2"

expect_fail "line counts" 1 "s3 has 3 lines but .*t2 has 2" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t2" --model "$T/m" $SMALL
expect_fail "missing file" 1 "nope.txt: No such file" "$NMT_BIN" train --src "$T/nope.txt" --tgt "$T/t3" --model "$T/m" $SMALL
expect_fail "invalid UTF-8" 1 "bad_utf8:2: invalid UTF-8" "$NMT_BIN" train --src "$T/bad_utf8" --tgt "$T/t3" --model "$T/m" $SMALL
expect_fail "dev line counts" 1 "has 3 lines but .* has 2" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --valid-src "$T/s3" --valid-tgt "$T/t2" --model "$T/m" $SMALL
expect_fail "nothing to train on" 1 "no sentence pair is left" "$NMT_BIN" train --src "$T/empty3" --tgt "$T/t3" --model "$T/m" $SMALL
expect_fail "unknown option" 2 "unknown option '--hidden'; did you mean --hid\\?" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --hidden 5
expect_fail "a flag given a value" 2 "nmt train: error: --reshuffle takes no value" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --reshuffle=1
expect_fail "bad number after =" 2 "--batch 'x5': not an integer" "$NMT_BIN" train --src="$T/s3" --tgt="$T/t3" --model="$T/m" --batch=x5
expect_fail "bad number" 2 "--batch 'x5': not an integer" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --batch x5
expect_fail "out of range" 2 "--hid 0: out of range" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --hid 0
expect_fail "bad arch" 2 "--arch 'transfomer'" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --arch transfomer
expect_fail "missing value" 2 "--src needs a value" "$NMT_BIN" train --src
expect_fail "required args" 2 "are required" "$NMT_BIN" train --src "$T/s3"
expect_fail "bad time" 2 "--max-time '3x'" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --max-time 3x
expect_fail "too big for memory" 1 "needs about .* GB .* available" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m" --emb 60000 --hid 60000
expect_fail "unknown command" 2 "unknown command 'trian'" "$NMT_BIN" trian
expect_fail "vocab missing file" 1 "nope: No such file" "$NMT_BIN" vocab "$T/nope"

# a short real run: empty pairs are skipped and counted; the model and log are written
printf 'a b\n\nc d e\n' > "$T/s"; printf 'x\ny\n\n' > "$T/t"
check "train runs" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --valid-src "$T/s" --valid-tgt "$T/t" --model "$T/m.nmt" $SMALL 2> "$T/log"
grep -q "2 skipped as empty" "$T/log" && ok || bad "empty pairs not counted: $(head -n 3 "$T/log")"
# a shortlist smaller than asked for: the library's warning, in the program's format
grep -qF "nmt train: warning: $T/s has fewer word types than asked for: its shortlist has 7 entries (EOS and UNK counted), not 10" "$T/log" \
    && ok || bad "no shortlist warning: $(grep -i warn "$T/log")"
# --normalize, the old spelling of --normalize-punct: trains, and warns
check "train --normalize" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m5.nmt" --tokenize en,en --lowercase --normalize $SMALL 2> "$T/log5"
grep -q "nmt train: warning: --normalize is an old spelling: use --normalize-punct" "$T/log5" && ok || bad "--normalize: no warning"
check "model written" test -s "$T/m.nmt"
check "checkpoint written" test -s "$T/m.nmt.ckpt"
head -n 1 "$T/m.nmt.log.tsv" | grep -q "^update	epoch	hours	train_nll" && ok || bad "TSV log header"
# resuming from a model that is not a checkpoint, or with another corpus, is refused
expect_fail "resume from a model" 1 "not a training checkpoint" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m2.nmt" --resume "$T/m.nmt" $SMALL
expect_fail "resume on another corpus" 1 "another corpus" "$NMT_BIN" train --src "$T/s3" --tgt "$T/t3" --model "$T/m2.nmt" --resume "$T/m.nmt.ckpt" $SMALL
# a corrupted checkpoint is refused and names the file
head -c 300 "$T/m.nmt.ckpt" > "$T/cut.ckpt"
expect_fail "truncated checkpoint" 1 "cut.ckpt" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m3.nmt" --resume "$T/cut.ckpt" $SMALL
# presets: an unknown name is a usage error; options given beside a preset override it, wherever
# they stand, and the rest of the preset holds
expect_fail "unknown preset" 2 "--preset 'fast': expected paper, hour, hour-v1 or transformer-hour" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m4.nmt" --preset fast
check "preset hour" "$NMT_BIN" train --lr 0.0005 --src "$T/s" --tgt "$T/t" --model "$T/m4.nmt" --preset hour $SMALL --maxout 4 2> "$T/log"
grep -q "optimizer adam (lr 0.0005, decayed on plateaus), clip 1, dropout 0.5," "$T/log" && ok || bad "preset hour with --lr: $(grep optimizer "$T/log")"
# hour sets the preset search's five options; hour-v1 is hour without them; each can be undone beside it
grep -q "^label smoothing 0.1, variational dropout 0.2 on embeddings and 0.2 on recurrent states" "$T/log" && ok || bad "preset hour: no regularisers: $(cat "$T/log")"
grep -q "^tied embeddings" "$T/log" && grep -q "^initialisation: the attention's weights Glorot-uniform" "$T/log" && ok || bad "preset hour: not tied or not Glorot: $(cat "$T/log")"
check "preset hour-v1" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m4.nmt" --overwrite --preset hour-v1 $SMALL 2> "$T/log"
grep -q "clip 1, dropout 0.5," "$T/log" && ! grep -Eq "^(label smoothing|tied|initialisation)" "$T/log" && ok || bad "preset hour-v1: $(cat "$T/log")"
check "preset hour, undone" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m4.nmt" --overwrite $SMALL --no-tied-embeddings --init paper \
    --label-smoothing 0 --dropout-emb 0 --dropout-rnn 0 --preset hour 2> "$T/log"
grep -q "clip 1, dropout 0.5," "$T/log" && ! grep -Eq "^(label smoothing|tied|initialisation)" "$T/log" && ok || bad "preset hour, undone: $(cat "$T/log")"
expect_fail "preset hour, sizes apart" 1 "tied embeddings need .*--no-tied-embeddings" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m4.nmt" --overwrite --preset hour --emb 16 --maxout 8
check "preset paper" "$NMT_BIN" train --preset paper --src "$T/s" --tgt "$T/t" --model "$T/m4.nmt" --overwrite $SMALL 2> "$T/log"
grep -q "optimizer adadelta (lr 1), clip 1, dropout 0," "$T/log" && ok || bad "preset paper: $(grep optimizer "$T/log")"
# a FIFO where a model or checkpoint is read (or the model's lock is taken) is refused at once;
# opening it waited for ever, SIGTERM included
mkfifo "$T/fifo"
TINY="--emb 4 --hid 4 --att 4 --maxout 2 --max-updates 2"
# shellcheck disable=SC2086
for args in "--model $T/fifo --vocab 10" "--model $T/mf --resume $T/fifo --vocab 10" \
    "--model $T/mf --pretrained-model $T/fifo --vocab 10" "--model $T/mf --spm-model $T/fifo"; do
    expect_fail "FIFO: $args" 1 "fifo: not a regular file \(a FIFO\)" timeout -s KILL 30 "$NMT_BIN" train --src "$T/s3" \
        --tgt "$T/t3" $args $TINY
done
check "help" "$NMT_BIN" train --help > /dev/null
finish train_errors
