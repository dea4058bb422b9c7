/* constrain.c: lexically constrained decoding's bookkeeping (constrain.h). A phrase is matched
 * token by token; a token that breaks the phrase under way abandons it (its progress is lost,
 * and the token may start another phrase). Banks follow Post & Vilar 2018 ("Fast Lexically
 * Constrained Decoding with Dynamic Beam Allocation", section 3): the beam's slots are shared
 * among the numbers of constraint tokens met, so that hypotheses that have placed more of the
 * constraints are not crowded out by fluent ones that have placed none. */
#include "decode/constrain.h"

int cons_tokens(const beam_hint *h)
{
    return h->nc ? h->off[h->nc] - h->off[0] : 0;
}

static int len_of(const beam_hint *h, int c) { return h->off[c + 1] - h->off[c]; }

/* the first phrase not completed whose first token is tok, or -1 */
static int starts(const beam_hint *h, uint64_t met, int tok)
{
    for (int c = 0; c < h->nc; c++)
        if (!(met >> c & 1) && h->tok[h->off[c]] == tok) return c;
    return -1;
}

static int met_tokens(const beam_hint *h, uint64_t met)
{
    int n = 0;
    for (int c = 0; c < h->nc; c++)
        if (met >> c & 1) n += len_of(h, c);
    return n;
}

cons_state cons_next(const beam_hint *h, cons_state s, int tok)
{
    if (s.cur >= 0 && h->tok[h->off[s.cur] + s.pos] == tok) {
        s.pos++;
    } else {
        s.cur = starts(h, s.met, tok);
        s.pos = s.cur >= 0;
    }
    if (s.cur >= 0 && s.pos == len_of(h, s.cur)) {
        s.met |= (uint64_t)1 << s.cur;
        s.cur = -1;
        s.pos = 0;
    }
    s.nmet = met_tokens(h, s.met) + s.pos;
    return s;
}

int cons_done(const beam_hint *h, const cons_state *s)
{
    uint64_t all = h->nc == 64 ? ~(uint64_t)0 : ((uint64_t)1 << h->nc) - 1;
    return s->cur < 0 && s->met == all;
}

/* tok added to out[0..n) unless there already */
static int add_once(int *out, int n, int tok)
{
    for (int i = 0; i < n; i++)
        if (out[i] == tok) return n;
    out[n] = tok;
    return n + 1;
}

int cons_wanted(const beam_hint *h, const cons_state *s, int *out)
{
    int n = 0;
    if (s->cur >= 0) n = add_once(out, n, h->tok[h->off[s->cur] + s->pos]);
    for (int c = 0; c < h->nc; c++)
        if (!(s->met >> c & 1)) n = add_once(out, n, h->tok[h->off[c]]);
    return n;
}

int cons_choose(topk_item *c, const int *bank, int np, int need, int nbanks, int *cnt)
{
    int *quota = cnt + nbanks, spare = 0, kept = 0;
    for (int b = 0; b < nbanks; b++) cnt[b] = 0;
    for (int i = 0; i < np; i++) cnt[bank[i]]++;
    for (int b = nbanks - 1; b >= 0; b--) {
        int q = need / nbanks + (b == nbanks - 1 ? need % nbanks : 0);
        quota[b] = q < cnt[b] ? q : cnt[b];
        spare += q - quota[b];
    }
    for (int b = nbanks - 1; b >= 0 && spare > 0; b--) { /* the unfilled slots, to the most advanced */
        int more = cnt[b] - quota[b] < spare ? cnt[b] - quota[b] : spare;
        quota[b] += more;
        spare -= more;
    }
    for (int i = 0; i < np; i++)
        if (quota[bank[i]] > 0) {
            quota[bank[i]]--;
            c[kept++] = c[i];
        }
    return kept;
}
