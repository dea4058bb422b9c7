/* translate.c: embedding nmt in a program: load a model, translate sentences, free everything.
 * Build, after make install: cc translate.c $(pkg-config --cflags --libs nmt)
 * Usage: translate MODEL "tokenized sentence" ... */
#include <stdio.h>

#include "nmt.h"

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: %s MODEL SENTENCE...\n", argv[0]); return 2; }
    nmt_err err;
    nmt_model *model;
    if (nmt_model_load(&model, argv[1], &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    nmt_translate_opts opts = nmt_translate_default_opts();  /* beam 12, length-normalised */
    nmt_decoder *dec;                                       /* one per thread; the model is shared */
    nmt_translation out[16];
    int n = argc - 2 < 16 ? argc - 2 : 16, rc = 1;
    if (!nmt_decoder_init(&dec, model, &opts, &err)) {
        if (!nmt_translate(dec, (const char *const *)argv + 2, n, out, &err)) {
            for (int i = 0; i < n; i++, putchar('\n'))
                for (int w = 0; out[i].n_hyps && w < out[i].hyps[0].n_words; w++)
                    printf("%s%s", w ? " " : "", out[i].hyps[0].words[w]);
            nmt_translation_free(out, n);
            rc = 0;
        }
        nmt_decoder_free(dec);
    }
    if (rc) fprintf(stderr, "%s: %s\n", nmt_status_str(err.code), err.msg);
    nmt_model_free(model);
    return rc;
}
