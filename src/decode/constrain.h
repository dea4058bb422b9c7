/* constrain.h: what a sentence's translation must hold, as target ids: a prefix forced token by
 * token before the search proper, and phrases that must each appear somewhere (lexically
 * constrained decoding by dynamic beam allocation, Post & Vilar 2018). Here: each hypothesis's
 * progress through its phrases, and the choice of a step's candidates by banks of progress. */
#ifndef NMT_CONSTRAIN_H
#define NMT_CONSTRAIN_H

#include <stdint.h>

#include "base/topk.h"

#define CONS_MAX 64 /* phrases per sentence: a hypothesis's completed ones are one uint64_t */

/* One sentence's hints (the arrays are the caller's). */
typedef struct beam_hint {
    int plen;            /* prefix tokens, forced at steps 0 .. plen-1 */
    const int *prefix;
    int nc;              /* phrases, <= CONS_MAX */
    const int *off;      /* [nc + 1]: phrase c is tok[off[c] .. off[c+1]), each non-empty */
    const int *tok;
} beam_hint;

/* A hypothesis's progress: the phrases it has completed, the one under way and how far. Its
 * bank (Post & Vilar's) is nmet, the constraint tokens it has produced so far. */
typedef struct cons_state {
    uint64_t met;
    int cur, pos;        /* the phrase under way (-1: none) and its tokens matched */
    int nmet;
} cons_state;

static inline cons_state cons_start(void) { return (cons_state){0, -1, 0, 0}; }
/* Σ of the phrases' lengths: the banks are 0 .. that */
int cons_tokens(const beam_hint *h);
/* s after emitting tok */
cons_state cons_next(const beam_hint *h, cons_state s, int tok);
/* every phrase completed (EOS is allowed only then) */
int cons_done(const beam_hint *h, const cons_state *s);
/* The tokens that advance s, distinct, into out (room for h->nc + 1): the next token of the
 * phrase under way and the first of each phrase not completed. Their count. */
int cons_wanted(const beam_hint *h, const cons_state *s, int *out);
/* Dynamic beam allocation: of the np candidates c[] (best first, distinct), bank[i] being
 * candidate i's, keep at most need, each bank of the nbanks getting need / nbanks slots (the
 * remainder to the top bank) and slots a bank cannot fill going to the highest banks that have
 * candidates left. c keeps the chosen, still best first; their count. cnt: scratch of 2 nbanks. */
int cons_choose(topk_item *c, const int *bank, int np, int need, int nbanks, int *cnt);

#endif
