/* hints.h: what `nmt translate` reads beside each input line for nmt_translate_hints: a target
 * prefix and constraint phrases, from files in step with the input (--prefix FILE, --constraints
 * FILE) or from tab-separated fields of the input line itself (--hints-in-input). */
#ifndef NMT_TOOLS_HINTS_H
#define NMT_TOOLS_HINTS_H

#include <stddef.h>

#include "nmt.h"
#include "text/linereader.h"

typedef struct cmd_hints {
    const char *prefix_path;   /* line i: sentence i's prefix (empty: none) */
    const char *cons_path;     /* line i: sentence i's phrases, separated by tabs (empty: none) */
    int in_input;              /* the input's lines are SOURCE[<TAB>PREFIX[<TAB>PHRASE]...] */
    linereader pf, cf;
    nmt_text *tgt;             /* the target side's text stages: hints are text as the output is */
    int n, cap;                /* lines gathered, at most cap */
    nmt_hint *h;               /* [cap] made when the batch is translated, from: */
    char **mem;                /* [cap] each line's encoded strings, NUL-terminated, one after another */
    size_t *used;              /* [cap] their bytes */
    long *at;                  /* [cap * (1 + NMT_MAX_PHRASES)] the prefix's offset in mem (-1: none),
                                  then the phrases' */
    const char **ph;           /* [cap * NMT_MAX_PHRASES] the phrases */
} cmd_hints;

/* 1 when an option asked for hints */
int cmd_hints_on(const cmd_hints *h);
/* Opens the files and the target side's pipeline of m, for batches of up to cap lines. */
int cmd_hints_open(cmd_hints *h, const nmt_model *m, int cap, nmt_err *err);
/* The hints of the input's next line (line: name:lineno, *len bytes; with in_input its fields
 * after the first tab are read and cut off), kept for the batch being gathered. NMT_ERR_FORMAT
 * naming the file and line for a missing line, an empty phrase or too many phrases. */
int cmd_hints_line(cmd_hints *h, char *line, size_t *len, const char *name, long lineno, nmt_err *err);
/* Translates the gathered batch (nmt_translate without hints) and starts the next. */
int cmd_hints_translate(cmd_hints *h, nmt_decoder *d, const char *const *src, int n, nmt_translation *out,
                        nmt_err *err);
/* At the end of the input: NMT_ERR_FORMAT when a hints file has lines left. */
int cmd_hints_end(cmd_hints *h, nmt_err *err);
void cmd_hints_free(cmd_hints *h);

#endif
