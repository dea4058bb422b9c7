/* hints.h: what `nmt translate` reads beside each input line as its prefix and constraint
 * phrases, from files in step with the input (--prefix FILE, --constraints FILE) or from
 * tab-separated fields of the input line itself (--hints-in-input); the library's worker turns
 * them into the model's tokens (nmt_worker_prefix, nmt_worker_phrase). */
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
} cmd_hints;

/* 1 when an option asked for hints */
int cmd_hints_on(const cmd_hints *h);
/* Opens the files. */
int cmd_hints_open(cmd_hints *h, nmt_err *err);
/* The hints of the input's next line (line: name:lineno, *len bytes; with in_input its fields
 * after the first tab are read and cut off), given to s through w. NMT_ERR_FORMAT or
 * NMT_ERR_ARG naming the file and line for a missing line, an empty phrase, too many phrases or
 * a word the model cannot be asked for. The line must have been encoded into s already, and
 * with in_input cut at its tab first: call cmd_hints_cut before encoding. */
int cmd_hints_line(cmd_hints *h, nmt_worker *w, nmt_sentence *s, const char *fields, const char *name, long lineno,
                   nmt_err *err);
/* With in_input: the line cut at its first tab (*len shortened, the tab made a NUL); the fields
 * after it, or NULL. */
const char *cmd_hints_cut(const cmd_hints *h, char *line, size_t *len);
/* At the end of the input: NMT_ERR_FORMAT when a hints file has lines left. */
int cmd_hints_end(cmd_hints *h, nmt_err *err);
void cmd_hints_free(cmd_hints *h);

#endif
