/* fuzz_npz.c: the .npz reader (Marian's model files): the bytes as an archive, loaded and, when
 * accepted, every array read as float32 and as bytes, every name looked up, the YAML measured.
 * Seeds: tests/data/npz/'s NumPy-written fixtures. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/npz.h"

int fuzz_npz(const uint8_t *data, size_t size)
{
    npz_file *f = NULL;
    nmt_err err;
    if (npz_load_mem(&f, data, size, "fuzz.npz", &err)) return 0;
    for (int i = 0; i < npz_count(f); i++) {
        const npz_array *a = npz_get(f, i);
        size_t nb = 0;
        const unsigned char *raw = npz_bytes(f, a, &nb);
        volatile unsigned char sink = nb ? raw[nb - 1] : 0;   /* the whole range is readable */
        (void)sink;
        if (npz_find(f, a->name) != a) abort();               /* names are unique once loaded */
        float *v = malloc(a->numel * sizeof *v + 1);          /* numel <= nb: bounded by the input */
        if (v && npz_read_f32(f, a, v, a->numel, &err) && a->dtype != NPZ_S1) abort();
        free(v);
    }
    const char *yml = npz_model_yml(f);
    if (yml && strlen(yml) > size) abort();
    npz_free(f);
    return 0;
}
