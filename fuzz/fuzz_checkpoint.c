/* fuzz_checkpoint.c: the training state of a checkpoint as `nmt train --resume` reads it:
 * train_state's fields, the saved plan (shuffle, order, minibatch starts) and the optimizer's
 * state, through the same functions, with the corpus size the checkpoint claims. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "train/trainer.h"

/* Plan and optimizer state for a parsed train_state, when small enough to be quick. */
static void read_rest(const st_file *f, const ckpt_state *s)
{
    nmt_err err;
    if (s->corpus_pairs <= (1 << 16)) {
        int *sh = malloc(sizeof(int) * s->corpus_pairs), *ord = malloc(sizeof(int) * s->corpus_pairs);
        int *st = malloc(sizeof(int) * ((size_t)s->nb + 1));
        if (sh && ord && st) ckpt_read_plan(f, s, sh, ord, st, &err);
        free(sh); free(ord); free(st);
    }
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "optim.%s.0", optim_name(s->optimizer));
    snprintf(n2, sizeof n2, "optim.%s.1", optim_name(s->optimizer));
    const st_tensor *t1 = st_find(f, n1) ? st_find(f, n1) : st_find(f, "opt.s1");
    const st_tensor *t2 = st_find(f, n2) ? st_find(f, n2) : st_find(f, "opt.s2");
    size_t n = t1 ? st_numel(t1) : 0;
    if (!t1 || n > (1 << 20) || (t2 && st_numel(t2) != n)) return;
    real *s1 = malloc(sizeof(real) * (n ? n : 1)), *s2 = t2 ? malloc(sizeof(real) * (n ? n : 1)) : NULL;
    if (s1 && (s2 || !t2)) ckpt_read_optim(backend_cpu(), f, s->optimizer, s1, s2, n, &err);
    free(s1); free(s2);
}

int fuzz_checkpoint(const uint8_t *data, size_t size)
{
    nmt_err err;
    st_file *f = NULL;
    if (st_load_mem(&f, data, size, "fuzz.ckpt", &err)) return 0;
    ckpt_state s;
    if (ckpt_parse(&s, f, &err) == 0) read_rest(f, &s);
    st_free(f);
    return 0;
}
