/* variant.c: the table of architectures (Bahdanau et al. 2014; Feng et al. 2016, MODEL.md
 * section 5). Rows are in the order of enum nmt_arch, which model files store by name. */
#include <string.h>

#include "nn/variant.h"

static const variant variants[] = {
    /* name              attention query_ctx input_ctx energy_xi  coverage family            typed guided */
    {"rnnsearch",        1,        0,        0,        XI_NONE,   0,       FAMILY_RNN,        1,    1},
    {"rnnenc",           0,        0,        0,        XI_NONE,   0,       FAMILY_RNN,        1,    0},
    {"recatt",           1,        1,        0,        XI_NONE,   0,       FAMILY_RNN,        1,    1},
    {"inputfeed",        1,        0,        1,        XI_NONE,   0,       FAMILY_RNN,        1,    1},
    {"markov",           1,        0,        0,        XI_MARKOV, 0,       FAMILY_RNN,        1,    1},
    {"locfer",           1,        0,        0,        XI_LOCFER, 0,       FAMILY_RNN,        1,    1},
    {"fertdec",          1,        0,        0,        XI_NONE,   1,       FAMILY_RNN,        1,    1},
    {"recatt+fertdec",   1,        1,        0,        XI_NONE,   1,       FAMILY_RNN,        1,    1},
    /* the Transformer's attention is its own (nn/tf_layer.c); "attention" says it has one, and
     * guided alignment trains one head of it */
    {"transformer",      1,        0,        0,        XI_NONE,   0,       FAMILY_TRANSFORMER, 1,    1},
};
#define N_VARIANTS (int)(sizeof variants / sizeof *variants)
_Static_assert(N_VARIANTS == NMT_ARCH_COUNT, "one row per enum nmt_arch value");

const variant *variant_get(int arch) { return arch >= 0 && arch < N_VARIANTS ? &variants[arch] : NULL; }

const variant *variant_of(const nmt_config *c) { return &variants[c->arch]; }

const char *nmt_arch_name(int arch)
{
    const variant *v = variant_get(arch);
    return v ? v->name : "unknown";
}

int nmt_arch_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < N_VARIANTS; i++)
        if (!strcmp(name, variants[i].name)) return i;
    if (!strcmp(name, "rnnencdec")) return NMT_ARCH_RNNENC; /* the paper's spelling */
    return -1;
}
