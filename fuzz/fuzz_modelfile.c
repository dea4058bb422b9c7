/* fuzz_modelfile.c: a model file (or checkpoint) as `nmt translate` meets it: the safetensors
 * container, read whole and read on demand, then the model's checks (format, config,
 * vocabularies, tensor shapes, finite weights, checksums); a small model that loads also
 * translates one sentence, so that whatever the checks let through is used once. */
#include <string.h>

#include "fuzz.h"
#include "io/safetensors.h"
#include "nn/model.h"

int fuzz_modelfile(const uint8_t *data, size_t size)
{
    nmt_err err;
    st_file *f = NULL;
    if (st_load_mem(&f, data, size, "fuzz.nmt", &err) == 0) {
        nmt_model *m = NULL;
        if (model_from_file(&m, f, &err) == 0) fuzz_translate_once(m);
        nmt_model_free(m);
        st_free(f);
    }
    /* the loader the program uses: header first, tensors read from the file on demand */
    const char *path = fuzz_file(0, data, size);
    nmt_model *m = NULL;
    if (path && nmt_model_load(&m, path, &err) == 0) nmt_model_free(m);
    return 0;
}
