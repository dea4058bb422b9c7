/* test_fuzz_replay.c: every committed fuzz input (fuzz/corpus/<harness>/: the seeds, and
 * fuzz/regressions/<harness>/: each crash the fuzzers found, kept after its fix) through the
 * same harness functions libFuzzer calls, without libFuzzer: under `make test`'s sanitizer
 * pass a regression that comes back is a failed test. NMT_FUZZ_DIR names the folder (fuzz). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz.h"
#include "helpers.h"
#include "test.h"

static const struct { const char *name; int (*fn)(const uint8_t *, size_t); } harness[] = {
    {"modelfile", fuzz_modelfile}, {"checkpoint", fuzz_checkpoint}, {"corpus", fuzz_corpus},
    {"tokenize", fuzz_tokenize}, {"detokenize", fuzz_detokenize}, {"alignio", fuzz_alignio},
    {"bleu", fuzz_bleu}, {"request", fuzz_request}, {"http", fuzz_http}, {"api", fuzz_api},
    {"npz", fuzz_npz}, {"marian", fuzz_marian},
};

/* Runs every file of dir through fn; the number of files, -1 when dir is missing. */
static int replay(const char *dir, int (*fn)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = 0;
        unsigned char *b = (unsigned char *)test_slurp(path, &n);
        CHECKF(b != NULL, "cannot read %s", path);
        if (!b) continue;
        fn(b, n); /* a crash or a sanitizer report ends the program: that is the failure */
        free(b);
        count++;
    }
    closedir(d);
    return count;
}

int main(void)
{
    const char *root = getenv("NMT_FUZZ_DIR");
    if (!root || !*root) root = "fuzz";
    for (size_t h = 0; h < sizeof harness / sizeof *harness; h++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/corpus/%s", root, harness[h].name);
        int seeds = replay(dir, harness[h].fn);
        CHECKF(seeds > 0, "%s: no seed inputs", dir);
        snprintf(dir, sizeof dir, "%s/regressions/%s", root, harness[h].name);
        int regs = replay(dir, harness[h].fn);
        printf("%-11s %d seeds, %d regressions replayed\n", harness[h].name, seeds, regs < 0 ? 0 : regs);
    }
    return test_done("test_fuzz_replay");
}
