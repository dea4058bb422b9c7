/* metric.c: the names of the measures of translation quality (enum nmt_metric in nmt.h), which
 * training's validation (train/valid_metric.c) and the evaluation library (eval/metric.c) both
 * read and write: here, below the two, so that neither calls the other for them. */
#include <string.h>

#include "nmt.h"

static const char *const names[] = {"ppl", "bleu", "chrf"};

int nmt_metric_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

const char *nmt_metric_name(int metric)
{
    return metric >= 0 && metric < (int)(sizeof names / sizeof *names) ? names[metric] : "?";
}
