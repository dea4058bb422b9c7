/* cmd_convert.c: `nmt convert --from marian MODEL.npz --vocabs SRC [TGT] [--spm SRC TGT] --model OUT`:
 * a model of another toolkit (Marian's, so OPUS-MT's) written as an nmt model file
 * (docs/OPUS-MT.md). Options only; the conversion is nmt_model_import_marian's. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "nmt.h"
#include "opt.h"

/* two file names, the second optional (nth 0, 1) */
typedef struct pair { const char *v[2]; int n; } pair;

static const char *take_pair(void *dst, const char *val, int nth)
{
    if (nth >= 2) return "two files at most";
    pair *p = dst;
    if (!p) return NULL;
    if (!*val) return "an empty file name";
    p->v[p->n++ % 2] = val;
    return NULL;
}

int cmd_convert(int argc, char **argv)
{
    const char *from = NULL, *out = NULL;
    pair vocabs = {{NULL, NULL}, 0}, spms = {{NULL, NULL}, 0};
    opt table[] = {
        OPT_STR1("--from", &from, "KIND", "the toolkit the model comes from: marian (OPUS-MT's models)"),
        {.names = "--vocabs", .kind = OPTK_FN, .dst = &vocabs, .fn = take_pair, .flags = OPT_MORE | OPT_ONCE,
         .arg = "SRC [TGT]", .help = "Marian's vocabulary .yml of the source and of the target (one file: a joint\n"
                                     "vocabulary)"},
        {.names = "--spm", .kind = OPTK_FN, .dst = &spms, .fn = take_pair, .flags = OPT_MORE | OPT_ONCE, .arg = "SRC TGT",
         .help = "the SentencePiece models of the source and the target (OPUS-MT's source.spm\n"
                 "target.spm): the model then reads and writes raw text; without them, pieces"},
        OPT_STR1("--model -m", &out, "FILE", "where the nmt model is written"),
        OPT_END,
    };
    opt_cmd c = {"convert", "Usage: nmt convert --from marian MODEL.npz --vocabs SRC [TGT] [--spm SRC TGT] --model OUT\n"
                 "Converts a Marian Transformer (an OPUS-MT model) into an nmt model file: its configuration from the\n"
                 "archive's special:model.yml, its parameters by Marian's names. Supported: post-norm and pre-norm\n"
                 "Transformers, tied or untied embeddings, relu or swish, the SSRU decoder, alignments from the\n"
                 "guided-alignment layer; anything else is refused by name (docs/OPUS-MT.md). Nothing is written\n"
                 "when the conversion fails.\n\n", NULL, table, 1, "one model"};
    char *args[1];
    int n, rc = opt_parse(&c, argc, argv, args, &n);
    if (rc != OPT_GO) return rc;
    if (!from || strcmp(from, "marian")) {
        fprintf(stderr, "nmt convert: error: --from %s: the kinds known are: marian\n", from ? from : "is required;");
        return CMD_USAGE;
    }
    if (n != 1 || !out || vocabs.n < 1 || spms.n == 1) {
        fprintf(stderr, "nmt convert: error: a MODEL.npz, --vocabs SRC [TGT] and --model OUT are required, and --spm takes two "
                        "files (nmt convert --help)\n");
        return CMD_USAGE;
    }
    nmt_err err;
    path_role in[5] = {{args[0], "the Marian model"}, {vocabs.v[0], "a vocabulary (--vocabs)"}}, outp[1] = {{out, "the model (--model)"}};
    int nin = 2;
    if (vocabs.v[1]) in[nin++] = (path_role){vocabs.v[1], "a vocabulary (--vocabs)"};
    for (int k = 0; k < spms.n; k++) in[nin++] = (path_role){spms.v[k], "a SentencePiece model (--spm)"};
    nmt_model *m = NULL;
    if (path_check_outputs(in, nin, outp, 1, &err) ||
        nmt_model_import_marian(&m, args[0], vocabs.v, spms.n ? spms.v : NULL, &err) || nmt_model_save(m, out, &err)) {
        fprintf(stderr, "nmt convert: error: %s\n", err.msg);
        nmt_model_free(m);
        return CMD_ERR;
    }
    fprintf(stderr, "nmt convert: %s (%zu parameters) written to %s\n", args[0], nmt_model_num_params(m), out);
    nmt_model_free(m);
    return CMD_OK;
}
