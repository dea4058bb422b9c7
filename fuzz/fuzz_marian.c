/* fuzz_marian.c: `nmt convert --from marian` on hostile files: the input is a vocabulary .yml,
 * a NUL, then an .npz; the model.yml reader, the vocabulary reader and the parameter mapping run
 * on them, and a model they accept translates once. Seeds: tests/data/marian/make_fixtures.py's
 * tiny post-norm, pre-norm and SSRU models. */
#include <stdlib.h>

#include "fuzz.h"
#include "nmt.h"

int fuzz_marian(const uint8_t *data, size_t size)
{
    size_t n1, n2;
    const uint8_t *p2;
    fuzz_split(data, size, 0, &n1, &p2, &n2);
    const char *vocab = fuzz_file(0, data, n1), *npz = fuzz_file(1, p2, n2);
    if (!vocab || !npz) return 0;
    const char *vocabs[2] = {vocab, NULL};
    nmt_model *m = NULL;
    nmt_err err;
    if (nmt_model_import_marian(&m, npz, vocabs, NULL, &err) == 0) {
        if (nmt_config_check(nmt_model_config(m), NULL)) abort(); /* accepted means a valid model */
        fuzz_translate_once(m);
    } else if (m || !err.msg[0]) {
        abort(); /* a refusal leaves nothing and says why */
    }
    nmt_model_free(m);
    return 0;
}
