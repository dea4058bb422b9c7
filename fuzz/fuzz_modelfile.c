/* fuzz_modelfile.c: a model file (or checkpoint) as `nmt translate` meets it: the safetensors
 * container, read whole and read on demand, then the model's checks (format, config,
 * vocabularies, tensor shapes, finite weights, checksums); a small model that loads also
 * translates one sentence, so that whatever the checks let through is used once. */
#include <string.h>

#include "fuzz.h"
#include "io/safetensors.h"
#include "nn/model.h"

static void translate_once(const nmt_model *m)
{
    if (nmt_model_num_params(m) > 200000) return; /* keep executions fast */
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 2;
    o.attention = 1;
    nmt_decoder *d = NULL;
    nmt_err err;
    if (nmt_decoder_init(&d, m, &o, &err) == 0) {
        const char *src[1] = {"a b c"};
        nmt_translation t[1];
        if (nmt_translate(d, src, 1, t, &err) == 0) nmt_translation_free(t, 1);
    }
    nmt_decoder_free(d);
}

int fuzz_modelfile(const uint8_t *data, size_t size)
{
    nmt_err err;
    st_file *f = NULL;
    if (st_load_mem(&f, data, size, "fuzz.nmt", &err) == 0) {
        nmt_model *m = NULL;
        if (model_from_file(&m, f, &err) == 0) translate_once(m);
        nmt_model_free(m);
        st_free(f);
    }
    /* the loader the program uses: header first, tensors read from the file on demand */
    const char *path = fuzz_file(0, data, size);
    nmt_model *m = NULL;
    if (path && nmt_model_load(&m, path, &err) == 0) nmt_model_free(m);
    return 0;
}
