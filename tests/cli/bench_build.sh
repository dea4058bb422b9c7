#!/bin/sh
# bench_build.sh: the benchmark program builds against the library as it is and runs, so that a
# change to the library's internals cannot leave `make bench` and `make bench-ab` broken unseen
# (make test builds no benchmark otherwise). Only in the plain pass: the sanitizer pass's
# library needs its own link flags, and the benchmark never runs under them.
. tests/cli/lib.sh
case " $* " in *" --quick "*) echo "bench_build: skipped in the sanitizer pass" >&2; finish bench_build; exit 0 ;; esac
BLASINC=/usr/include/x86_64-linux-gnu/openblas-openmp
BLASDIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
gcc -std=c11 -D_GNU_SOURCE -fno-math-errno -O1 -mavx2 -mfma -fopenmp -Wall -Wextra -Werror -Iinclude -Isrc -I$BLASINC \
    bench/bench_train.c build/libnmt.a -fopenmp -L$BLASDIR -Wl,-rpath,$BLASDIR \
    -lsentencepiece_train -lsentencepiece -lstdc++ -lopenblas -ldnnl -lcjson -lz -lm -o "$T/bench_train" 2> "$T/cc.log" \
    && ok || bad "bench/bench_train.c does not build: $(head -n 5 "$T/cc.log")"
# the overlap probe of scripts/bench_mpi.sh, where Open MPI is installed
if pkg-config --exists ompi-c; then
    # shellcheck disable=SC2046
    gcc -std=c11 -D_GNU_SOURCE -fno-math-errno -O1 -mavx2 -mfma -fopenmp -Wall -Wextra -Werror -Iinclude -Isrc -I$BLASINC \
        $(pkg-config --cflags ompi-c) bench/bench_overlap.c build/libnmt.a -fopenmp -L$BLASDIR -Wl,-rpath,$BLASDIR \
        -lsentencepiece_train -lsentencepiece -lstdc++ -lopenblas -ldnnl -lcjson -lz -lm $(pkg-config --libs ompi-c) \
        -o "$T/bench_overlap" 2> "$T/cc.log" && ok || bad "bench/bench_overlap.c does not build: $(head -n 5 "$T/cc.log")"
fi
D=$NMT_SHARED/data/multi30k/tok
head -n 300 "$D/train.en" > "$T/s"; head -n 300 "$D/train.fr" > "$T/t"
timeout 60 "$T/bench_train" --src "$T/s" --tgt "$T/t" --emb 8 --hid 8 --att 8 --maxout 8 --vocab 200 --max-len 50 \
    --warmup 1 --updates 2 --threads 1 > "$T/out" 2>&1
grep -q '^RESULT tok_s=[0-9]' "$T/out" && ok || bad "bench_train did not report: $(tail -n 3 "$T/out")"
finish bench_build
