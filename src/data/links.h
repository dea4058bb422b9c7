/* links.h: word alignments for guided alignment training (docs/TRAINING.md): a file of Pharaoh
 * links, one line per corpus line, "i-j" for source word i and target word j (from 0), as
 * fast_align and `nmt ibm` write them; an empty line has none. Every line is checked against the
 * corpus before training, and the links of the pairs kept are stored with them, so that they
 * follow each pair through shuffling, the length filter and batching. */
#ifndef NMT_LINKS_H
#define NMT_LINKS_H

#include "nmt.h"
#include "data/corpus.h"

/* Reads path, checks it line by line against the corpus sides s and t (as many lines; each link
 * a pair of indices inside its line's words), and stores the links of p's pairs in p->link_off
 * and p->link, each pair's sorted by target word, then source word. Errors name file:line. */
int links_attach(pairs *p, const char *path, const textfile *s, const textfile *t, nmt_err *err);

#endif
