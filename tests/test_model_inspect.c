/* test_model_inspect.c: what the public API adds for programs that inspect a model or score word
 * by word (the Python package's load_tensors and score_batch): nmt_model_tensor gives every
 * tensor's name, shape and values as the file stores them (checked against the file read back by
 * the safetensors reader); nmt_model_vocab_size and _entry give each side's vocabulary (checked
 * against the word lists the model was made from, before and after a save), and
 * nmt_model_has_text_stages tells a model of raw text (its stages set in the model's fields) from
 * one of tokenized text; and nmt_force_align's token_logprob gives each target token's
 * log-probability (checked against differences of forced_logp over prefixes, the training
 * forward pass, and for an ensemble against the weighted sum of its models'). */
/* kernel sets: one: tensors and vocabularies read back, scores against the program's own path in one process (tests/cli/kernels.sh) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "nn/model.h"
#include "test.h"
#include "tiny_model.h"

static nmt_config config(int arch)
{
    return (nmt_config){arch, 9, 8, 4, 5, 4, 3, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
}

/* Every tensor of m against the saved file: names in order, shapes, values bit for bit. */
static void test_tensors(int arch)
{
    rng r;
    rng_seed(&r, 7);
    nmt_model *m = tiny_random_model(config(arch), &r, 0.3);
    char path[64];
    snprintf(path, sizeof path, "/tmp/nmt-inspect-%d.nmt", (int)getpid());
    nmt_err err;
    NMT_ASSERT(nmt_model_save(m, path, &err) == 0);
    st_file *f;
    NMT_ASSERT(st_load(&f, path, &err) == 0);
    CHECKF(nmt_model_num_tensors(m) == st_count(f), "%s: %d tensors, the file %d", nmt_arch_name(arch),
           nmt_model_num_tensors(m), st_count(f));
    for (int i = 0; i < nmt_model_num_tensors(m) && i < st_count(f); i++) {
        const st_tensor *t = st_get(f, i);
        const char *name;
        int ndim;
        int64_t shape[2];
        NMT_ASSERT(nmt_model_tensor(m, i, &name, &ndim, shape, NULL, &err) == 0);
        CHECKF(!strcmp(name, t->name) && ndim == t->ndim && shape[0] == t->shape[0] && (ndim == 1 || shape[1] == t->shape[1]),
               "%s tensor %d: %s %d-d, the file %s", nmt_arch_name(arch), i, name, ndim, t->name);
        size_t n = st_numel(t);
        float *got = malloc(sizeof *got * n), *want = malloc(sizeof *want * n);
        NMT_ASSERT(nmt_model_tensor(m, i, &name, &ndim, shape, got, &err) == 0);
        NMT_ASSERT(st_read_f32(f, t->name, want, n, &err) == 0);
        CHECKF(!memcmp(got, want, sizeof *got * n), "%s: %s values differ from the file's", nmt_arch_name(arch), name);
        free(got);
        free(want);
    }
    const char *name;
    int ndim;
    int64_t shape[2];
    CHECK(nmt_model_tensor(m, nmt_model_num_tensors(m), &name, &ndim, shape, NULL, &err) == NMT_ERR_ARG);
    CHECK(nmt_model_tensor(m, -1, &name, &ndim, shape, NULL, &err) == NMT_ERR_ARG);
    st_free(f);
    unlink(path);
    nmt_model_free(m);
}

/* m's vocabularies are src[0..ns) and tgt[0..nt); what is the what in messages */
static void check_vocab(const nmt_model *m, const char *what, const char *const *src, int ns, const char *const *tgt,
                        int nt)
{
    const char *const *want[2] = {src, tgt};
    int n[2] = {ns, nt};
    for (int side = NMT_SOURCE; side <= NMT_TARGET; side++) {
        CHECKF(nmt_model_vocab_size(m, side) == n[side], "%s side %d: %d entries, made with %d", what, side,
               nmt_model_vocab_size(m, side), n[side]);
        for (int id = 0; id < n[side] && id < nmt_model_vocab_size(m, side); id++) {
            const char *got = nmt_model_vocab_entry(m, side, id);
            CHECKF(got && !strcmp(got, want[side][id]), "%s side %d id %d: '%s', made with '%s'", what, side, id,
                   got ? got : "(null)", want[side][id]);
        }
        CHECK(nmt_model_vocab_entry(m, side, n[side]) == NULL && nmt_model_vocab_entry(m, side, -1) == NULL);
    }
}

/* A word model of tokenized text, then one of raw text (stages set as nmt train --tokenize sets
 * them), each saved and loaded again: the same entries, no subwords, text stages only for the
 * second. */
static void test_vocab_text(void)
{
    static const char *const sw[] = {"</s>", "<unk>", "le", "chat", "noir"}, *tw[] = {"</s>", "<unk>", "the", "cat"};
    nmt_config c = {NMT_ARCH_RNNSEARCH, 5, 4, 4, 5, 4, 3, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    char path[64];
    snprintf(path, sizeof path, "/tmp/nmt-inspect-vocab-%d.nmt", (int)getpid());
    nmt_err err;
    nmt_model *m;
    NMT_ASSERT(nmt_model_create(&m, &c, sw, tw, 1, &err) == 0);
    for (int raw = 0; raw < 2; raw++) {
        if (raw) {
            m->has_text = 1;
            for (int side = 0; side < 2; side++) {
                m->text[side] = nmt_text_default_opts();
                m->text[side].lang = side ? NMT_LANG_FR : NMT_LANG_EN;
                m->text[side].tokenize = 1;
                m->text[side].detokenize = side;
            }
        }
        nmt_model *m2 = NULL;
        NMT_ASSERT(nmt_model_save(m, path, &err) == 0 && nmt_model_load(&m2, path, &err) == 0);
        const nmt_model *both[2] = {m, m2};
        for (int k = 0; k < 2; k++) {
            const char *what = raw ? (k ? "raw-text model, loaded" : "raw-text model")
                                   : (k ? "tokenized-text model, loaded" : "tokenized-text model");
            check_vocab(both[k], what, sw, 5, tw, 4);
            CHECKF(nmt_model_has_subwords(both[k]) == 0, "%s: subwords", what);
            CHECKF(nmt_model_has_text_stages(both[k]) == raw && both[k]->has_text == raw, "%s: text stages %d, has_text %d",
                   what, nmt_model_has_text_stages(both[k]), both[k]->has_text);
        }
        nmt_model_free(m2);
    }
    unlink(path);
    nmt_model_free(m);
}

static const char *const SRC[] = {"w2 w3 w4", "w5 w8", "w6"};
static const char *const TGT[] = {"w3 w2 w7", "w4", ""};
enum { NS = 3 };

/* ids of a "w<id> ..." line into ids, EOS appended; the count */
static int ids_of(const char *s, int *ids)
{
    int n = 0, k, used;
    while (sscanf(s, " w%d%n", &k, &used) == 1) { ids[n++] = k; s += used; }
    ids[n++] = 0;
    return n;
}

/* Each token's log-probability is the difference of forced_logp over the prefixes ending at it
 * and before it; they sum to nmt_force_align's logprob. */
static void test_token_logprob(int arch)
{
    rng r;
    rng_seed(&r, 11);
    nmt_model *m = tiny_random_model(config(arch), &r, 0.5);
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d;
    nmt_err err;
    NMT_ASSERT(nmt_decoder_init(&d, m, &o, &err) == 0);
    nmt_alignment al[NS];
    NMT_ASSERT(nmt_force_align(d, SRC, TGT, NS, al, &err) == 0);
    for (int s = 0; s < NS; s++) {
        int x[16], y[16], xl = ids_of(SRC[s], x), yl = ids_of(TGT[s], y);
        CHECK(al[s].token_logprob && al[s].n_tgt + 1 == yl);
        double sum = 0;
        for (int t = 0; t < yl && al[s].token_logprob; t++) {
            double want = forced_logp(m, x, xl, y, t + 1) - (t ? forced_logp(m, x, xl, y, t) : 0);
            CHECKF(fabs(al[s].token_logprob[t] - want) < 1e-5, "%s pair %d token %d: %.9g, prefixes give %.9g",
                   nmt_arch_name(arch), s, t, al[s].token_logprob[t], want);
            sum += al[s].token_logprob[t];
        }
        CHECKF(fabs(sum - al[s].logprob) < 1e-9, "%s pair %d: tokens sum to %.12g, logprob %.12g", nmt_arch_name(arch), s,
               sum, al[s].logprob);
    }
    nmt_alignment_free(al, NS);
    nmt_decoder_free(d);
    nmt_model_free(m);
}

/* An ensemble's per-token log-probabilities are the weighted sums of its models'. */
static void test_ensemble_tokens(void)
{
    rng r;
    rng_seed(&r, 13);
    const nmt_model *m[2] = {tiny_random_model(config(NMT_ARCH_RNNSEARCH), &r, 0.5),
                             tiny_random_model(config(NMT_ARCH_FERTDEC), &r, 0.5)};
    double w[2] = {1, 3};
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d[3];
    nmt_err err;
    nmt_alignment al[3][NS];
    for (int k = 0; k < 2; k++) NMT_ASSERT(nmt_decoder_init(&d[k], m[k], &o, &err) == 0);
    NMT_ASSERT(nmt_decoder_init_ensemble(&d[2], m, w, 2, &o, &err) == 0);
    for (int k = 0; k < 3; k++) NMT_ASSERT(nmt_force_align(d[k], SRC, TGT, NS, al[k], &err) == 0);
    for (int s = 0; s < NS; s++)
        for (int t = 0; t <= al[2][s].n_tgt; t++) {
            double want = 0.25 * al[0][s].token_logprob[t] + 0.75 * al[1][s].token_logprob[t];
            CHECKF(fabs(al[2][s].token_logprob[t] - want) < 1e-9, "ensemble pair %d token %d: %.12g, want %.12g", s, t,
                   al[2][s].token_logprob[t], want);
        }
    for (int k = 0; k < 3; k++) {
        nmt_alignment_free(al[k], NS);
        nmt_decoder_free(d[k]);
    }
    nmt_model_free((nmt_model *)m[0]);
    nmt_model_free((nmt_model *)m[1]);
}

int main(void)
{
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        test_tensors(arch);
        test_token_logprob(arch);
    }
    test_ensemble_tokens();
    test_vocab_text();
    return test_done("test_model_inspect");
}
