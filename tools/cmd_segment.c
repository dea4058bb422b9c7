/* cmd_segment.c: `nmt segment`, how a model cuts sentences into the tokens it reads (a subword
 * model's SentencePiece pieces, after its text stages). It looks at one side of the model. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "nmt.h"
#include "opt.h"
#include "text/linereader.h"

static int load(const char *cmd, const char *path, nmt_model **m)
{
    nmt_err err;
    if (nmt_model_load(m, path, &err)) {
        fprintf(stderr, "nmt %s: error: %s\n", cmd, err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}

/* Every line of in through tp, its tokens printed space-separated. */
static int segment_lines(linereader *in, nmt_text *tp)
{
    char *line;
    size_t len;
    nmt_err err;
    int got;
    while ((got = linereader_next(in, &line, &len, &err)) > 0) {
        nmt_text_line l;
        if (nmt_text_encode(tp, line, len, &l, &err)) {
            fprintf(stderr, "nmt segment: error: %s:%ld: %s\n", in->name, in->lineno, err.msg);
            return CMD_ERR;
        }
        if (l.n_invalid)
            fprintf(stderr, "[W::segment] %s:%ld: invalid UTF-8 replaced by U+FFFD (%d bytes)\n", in->name, in->lineno, l.n_invalid);
        fwrite(l.text, 1, l.len, stdout);
        putchar('\n');
    }
    if (got < 0) fprintf(stderr, "nmt segment: error: %s\n", err.msg);
    return got < 0 ? CMD_ERR : CMD_OK;
}

int cmd_segment(int argc, char **argv)
{
    const char *model = NULL, *input = NULL;
    int side = 0;
    opt table[] = {
        OPT_STR1("--model", &model, "FILE", "the model (required)"),
        OPT_CHOICE("--side", &side, "src|tgt", "which side's segmentation (default src)"),
        OPT_STR1("--input", &input, "FILE", "read FILE instead of standard input"),
        OPT_END,
    };
    opt_cmd c = {"segment", "Usage: nmt segment --model FILE [--side src|tgt] [--input FILE] < text > tokens\n"
                 "Shows how the model reads text: one line in, its tokens out, separated by spaces. For a subword\n"
                 "model these are its SentencePiece pieces after its own text stages (lowercasing, punctuation\n"
                 "normalization, Moses tokenization, as it was trained); a word model's are its words (after the\n"
                 "Moses stages it stores when it was trained on raw text).\n\n",
                 NULL, table, 0, "input comes on standard input, or with --input FILE"};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (!model) { fprintf(stderr, "nmt segment: error: --model is required (nmt segment --help)\n"); return CMD_USAGE; }
    linereader in;
    nmt_err err;
    if (input ? linereader_init(&in, input, 0, &err) : linereader_init_fd(&in, 0, "stdin", 0, &err)) {
        fprintf(stderr, "nmt segment: error: %s\n", err.msg);
        return CMD_ERR;
    }
    nmt_model *m = NULL;
    nmt_text *tp = NULL;
    nmt_text_opts o = nmt_text_default_opts();
    if (!(rc = load("segment", model, &m)) && nmt_text_init_model(&tp, &o, m, side, &err)) {
        fprintf(stderr, "nmt segment: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    if (!rc) rc = segment_lines(&in, tp);
    nmt_text_free(tp);
    nmt_model_free(m);
    linereader_free(&in);
    return rc;
}
