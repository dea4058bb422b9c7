/* ter.c: TER as sacreBLEU 2.x computes it (mjpost/sacrebleu, metrics/ter.py and lib_ter.py, a
 * re-implementation of tercom 0.7.25). Per segment and reference, the hypothesis words are
 * greedily shifted while a shift lowers the word-level edit distance to the reference; then
 *     edits = shifts + edit distance (insertions, deletions, substitutions, each costing 1),
 *     TER   = 100 * sum of edits / sum of reference lengths.
 * Which shifts are tried, and in what order, is tercom's heuristic, reproduced step by step:
 * a block of 1..10 words that matches the reference within 50 positions, whose words are
 * wrong where they stand and whose reference words are unmatched, is tried before each
 * reference word it could align to; the best candidate (largest gain, then the longest, the
 * earliest in the hypothesis, the earliest target) is kept; at most 1000 candidates are scored
 * per segment and reference, and a search that reaches that limit applies no further shift.
 * The edit distance only fills a band of +-25 cells (wider for very unequal lengths) around the
 * length-scaled diagonal, so it is not always the true Levenshtein distance: tercom's and
 * sacreBLEU's are not either, and the band is part of what is reproduced. Only the band is
 * stored (every other cell is INF by definition), so memory is linear in the line lengths: a
 * 20,000-word pair once took 1.9 GB for the whole matrix. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/ter.h"
#include "eval/bleu_segment.h"
#include "base/err.h"

#define MAX_SHIFT_SIZE 10         /* words in one shifted block */
#define MAX_SHIFT_DIST 50         /* |hypothesis position - reference position| of a block */
#define BEAM_WIDTH 25             /* cells either side of the diagonal */
#define MAX_SHIFT_CANDIDATES 1000 /* candidates scored per segment and reference */
/* A cell outside the band. Costs are at most nh + nr, far below it, and INF + 1 stays in range,
 * so an unreachable cell never becomes reachable (as with sacreBLEU's 10^16). */
#define INF (1 << 30)

/* The edit that reached a cell, in sacreBLEU's order of preference for equal costs: a match or
 * substitution, then a hypothesis word dropped, then a reference word added. */
enum { OP_NOP, OP_SUB, OP_DEL, OP_INS, OP_UNDEF };

/* The work space of one hypothesis-reference pair, sized once; nothing is allocated while
 * shifts are searched. The matrix rows are hypothesis prefixes (0..nh words), its columns
 * reference prefixes (0..nr words). */
typedef struct ted {
    const uint32_t *ref;
    int nh, nr, beam;
    double ratio;                  /* nr / nh: the slope of the band's diagonal */
    int *lo, *hi;                  /* (nh+1): row i's band, columns [lo[i], hi[i]) */
    size_t *off;                   /* (nh+1): where row i's band starts in cost and op */
    int32_t *cost;                 /* the bands of the last full computation's rows, one after
                                      another: what lies outside them is INF, never stored */
    unsigned char *op;             /* and the edits that reached them (outside: OP_UNDEF) */
    int32_t *prev, *cur;           /* (nr+1) each: the rows of a candidate's computation */
    uint32_t *words, *cand, *best; /* (nh) each: current hypothesis, a candidate, the best one */
    int *align;                    /* (nr): the hypothesis position a reference word aligns to */
    unsigned char *herr, *rerr;    /* (nh), (nr): 1 where a word is not matched */
    unsigned char *trace;          /* (nh + nr): the edits, last first */
} ted;

static void ted_free(ted *t)
{
    free(t->lo);
    free(t->hi);
    free(t->off);
    free(t->cost);
    free(t->op);
    free(t->prev);
    free(t->cur);
    free(t->words);
    free(t->cand);
    free(t->best);
    free(t->align);
    free(t->herr);
    free(t->rerr);
    free(t->trace);
}

/* Row i's band: the columns within beam of the length-scaled diagonal; row 0 whole (every
 * reference word inserted), the last row from its band's start to the end, so that (nh, nr) is
 * reached. The only cells any computation fills: all others are INF. */
static void band_of(const ted *t, int i, int *lo, int *hi)
{
    if (i == 0) {
        *lo = 0;
        *hi = t->nr + 1;
        return;
    }
    int diag = (int)floor((double)i * t->ratio);
    *lo = diag - t->beam > 0 ? diag - t->beam : 0;
    *hi = diag + t->beam < t->nr + 1 ? diag + t->beam : t->nr + 1;
    if (i == t->nh) *hi = t->nr + 1;
    if (*hi < *lo) *hi = *lo;
}

/* Every row's band and where it is stored; the cells of all bands, about (nh+1) * 2 * beam + nr:
 * linear in the lengths, where the whole matrix would be their product. */
static size_t band_layout(ted *t)
{
    size_t cells = 0;
    for (int i = 0; i <= t->nh; i++) {
        band_of(t, i, &t->lo[i], &t->hi[i]);
        t->off[i] = cells;
        cells += (size_t)(t->hi[i] - t->lo[i]);
    }
    return cells;
}

static int ted_init(ted *t, const uint32_t *hyp, int nh, const uint32_t *ref, int nr)
{
    memset(t, 0, sizeof *t);
    t->ref = ref;
    t->nh = nh;
    t->nr = nr;
    t->ratio = nh > 0 ? (double)nr / (double)nh : 1.0;
    /* so that a steep diagonal still overlaps the previous row's band */
    t->beam = BEAM_WIDTH < t->ratio / 2 ? (int)ceil(t->ratio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
    size_t h = (size_t)nh + 1, r = (size_t)nr + 1;
    t->lo = malloc(h * sizeof *t->lo);
    t->hi = malloc(h * sizeof *t->hi);
    t->off = malloc(h * sizeof *t->off);
    size_t cells = t->lo && t->hi && t->off ? band_layout(t) : 0;
    t->cost = malloc((cells ? cells : 1) * sizeof *t->cost);
    t->op = malloc(cells ? cells : 1);
    t->prev = malloc(r * sizeof *t->prev);
    t->cur = malloc(r * sizeof *t->cur);
    t->words = malloc(h * sizeof *t->words);
    t->cand = malloc(h * sizeof *t->cand);
    t->best = malloc(h * sizeof *t->best);
    t->align = malloc(r * sizeof *t->align);
    t->herr = malloc(h);
    t->rerr = malloc(r);
    t->trace = malloc(h + r);
    if (!t->lo || !t->hi || !t->off || !t->cost || !t->op || !t->prev || !t->cur || !t->words || !t->cand || !t->best || !t->align ||
        !t->herr || !t->rerr || !t->trace) {
        ted_free(t);
        return -1;
    }
    if (nh > 0) memcpy(t->words, hyp, (size_t)nh * sizeof *hyp);
    return 0;
}

/* ======================= banded edit distance ======================= */

/* Cell j of a row whose band [lo, hi) is stored from row[0]: INF outside it. */
static int32_t cell(const int32_t *row, int lo, int hi, int j)
{
    return j >= lo && j < hi ? row[j - lo] : INF;
}

/* Row i (1..nh) of the matrix for hypothesis word w into cur (its band, from cur[0]), from row
 * i-1 (prev, its band from prev[0]): only the band's cells are computed, every other cell is INF.
 * op (the same layout as cur) may be NULL when only costs are wanted. */
static void fill_row(const ted *t, int32_t *cur, unsigned char *op, const int32_t *prev, uint32_t w, int i)
{
    int lo = t->lo[i], hi = t->hi[i], plo = t->lo[i - 1], phi = t->hi[i - 1];
    for (int j = lo; j < hi; j++) {
        if (j == 0) {
            cur[0] = cell(prev, plo, phi, 0) + 1;
            if (op) op[0] = OP_DEL;
            continue;
        }
        int sub = w != t->ref[j - 1];
        int32_t c[3] = {cell(prev, plo, phi, j - 1) + sub, cell(prev, plo, phi, j) + 1, (j - 1 >= lo ? cur[j - 1 - lo] : INF) + 1};
        unsigned char o[3] = {sub ? OP_SUB : OP_NOP, OP_DEL, OP_INS};
        int32_t best = INF;
        unsigned char bo = OP_UNDEF;
        for (int k = 0; k < 3; k++) {
            if (best > c[k]) { /* strictly: the first cheapest in o's order wins */
                best = c[k];
                bo = o[k];
            }
        }
        cur[j - lo] = best;
        if (op) op[j - lo] = bo;
    }
}

/* The matrix for t->words, kept for the alignment and for candidates' shared prefixes. */
static int32_t full_distance(ted *t)
{
    for (int j = 0; j <= t->nr; j++) {
        t->cost[j] = j; /* every reference word inserted */
        t->op[j] = OP_INS;
    }
    for (int i = 1; i <= t->nh; i++)
        fill_row(t, t->cost + t->off[i], t->op + t->off[i], t->cost + t->off[i - 1], t->words[i - 1], i);
    return cell(t->cost + t->off[t->nh], t->lo[t->nh], t->hi[t->nh], t->nr);
}

/* The distance of w, whose first p words are t->words' (so rows 0..p are the matrix's). */
static int32_t candidate_distance(ted *t, const uint32_t *w, int p)
{
    if (p == t->nh) return cell(t->cost + t->off[t->nh], t->lo[t->nh], t->hi[t->nh], t->nr);
    const int32_t *prev = t->cost + t->off[p];
    for (int i = p + 1; i <= t->nh; i++) {
        fill_row(t, t->cur, NULL, prev, w[i - 1], i);
        int32_t *x = t->prev; /* the row just filled becomes the one read */
        t->prev = t->cur;
        t->cur = x;
        prev = t->prev;
    }
    return cell(t->prev, t->lo[t->nh], t->hi[t->nh], t->nr);
}

/* The edit that reached cell (i, j): OP_UNDEF outside row i's band */
static unsigned char op_at(const ted *t, int i, int j)
{
    return j >= t->lo[i] && j < t->hi[i] ? t->op[t->off[i] + (size_t)(j - t->lo[i])] : OP_UNDEF;
}

/* From the matrix's edits: which words are unmatched, and where each reference word aligns
 * (sacreBLEU's trace_to_alignment of the flipped trace; a reference word that is added aligns
 * to the hypothesis word before it, -1 at the start). */
static void align_words(ted *t)
{
    size_t k = 0;
    int i = t->nh, j = t->nr;
    while (i > 0 || j > 0) {
        unsigned char o = op_at(t, i, j);
        t->trace[k++] = o;
        if (o == OP_NOP || o == OP_SUB) i--, j--;
        else if (o == OP_INS) j--;
        else {
            /* every finite cell was reached from a finite one, and (nh, nr) is finite: the
             * path never leaves the band (sacreBLEU raises on the impossible case) */
            NMT_ASSERT(o == OP_DEL);
            i--;
        }
    }
    int ph = -1, pr = -1;
    while (k-- > 0) {
        unsigned char o = t->trace[k];
        if (o != OP_INS) ph++;
        if (o != OP_DEL) pr++;
        if (o != OP_INS) t->herr[ph] = o != OP_NOP;
        if (o != OP_DEL) {
            t->align[pr] = ph;
            t->rerr[pr] = o != OP_NOP;
        }
    }
}

/* ======================= shifts ======================= */

/* Appends w[a..b) to dst at *k, a and b clamped to [0, n] as Python slices are. */
static void put(uint32_t *dst, int *k, const uint32_t *w, int n, int a, int b)
{
    a = a < n ? a : n;
    b = b < n ? b : n;
    for (int i = a; i < b; i++) dst[(*k)++] = w[i];
}

/* w with its block [s, s+len) moved before position target (sacreBLEU's _perform_shift,
 * whose third case moves a block whose target falls inside it). */
static void perform_shift(uint32_t *dst, const uint32_t *w, int n, int s, int len, int target)
{
    int k = 0;
    if (target < s) {
        put(dst, &k, w, n, 0, target);
        put(dst, &k, w, n, s, s + len);
        put(dst, &k, w, n, target, s);
        put(dst, &k, w, n, s + len, n);
    } else if (target > s + len) {
        put(dst, &k, w, n, 0, s);
        put(dst, &k, w, n, s + len, target);
        put(dst, &k, w, n, s, s + len);
        put(dst, &k, w, n, target, n);
    } else {
        put(dst, &k, w, n, 0, s);
        put(dst, &k, w, n, s + len, len + target);
        put(dst, &k, w, n, s, s + len);
        put(dst, &k, w, n, len + target, n);
    }
}

/* A scored shift; ranked by gain, then length, then the earliest start, then earliest target. */
typedef struct shift {
    int gain, len, start, target, found;
} shift;

static int better(const shift *a, const shift *b)
{
    if (!b->found) return 1;
    if (a->gain != b->gain) return a->gain > b->gain;
    if (a->len != b->len) return a->len > b->len;
    if (a->start != b->start) return a->start < b->start;
    return a->target < b->target;
}

static int any_set(const unsigned char *v, int a, int len)
{
    for (int i = a; i < a + len; i++)
        if (v[i]) return 1;
    return 0;
}

/* Tries the block hyp[sh, sh+len) = ref[sr, sr+len) before each reference word it could align
 * to, if the block is worth moving; keeps the best candidate in *best and t->best. */
static void try_block(ted *t, int32_t pre, int sh, int sr, int len, shift *best, int *checked)
{
    if (!any_set(t->herr, sh, len) || !any_set(t->rerr, sr, len)) return;
    if (sh <= t->align[sr] && t->align[sr] < sh + len) return; /* it would stay in place */
    int prev_idx = -1;
    for (int off = -1; off < len; off++) {
        int idx = sr + off == -1 ? 0 : t->align[sr + off] + 1; /* sacreBLEU inserts before */
        if (idx == prev_idx) continue;
        prev_idx = idx;
        perform_shift(t->cand, t->words, t->nh, sh, len, idx);
        int p = 0;
        while (p < t->nh && t->cand[p] == t->words[p]) p++;
        shift c = {pre - candidate_distance(t, t->cand, p), len, sh, idx, 1};
        (*checked)++;
        if (better(&c, best)) {
            *best = c;
            memcpy(t->best, t->cand, (size_t)t->nh * sizeof *t->best);
        }
    }
}

/* One round of sacreBLEU's _shift: the best shift of t->words (best->found 0 if none), the
 * candidates counted in *checked across rounds. */
static shift best_shift(ted *t, int32_t pre, int *checked)
{
    shift best = {0, 0, 0, 0, 0};
    for (int sh = 0; sh < t->nh; sh++) {
        /* only reference positions within MAX_SHIFT_DIST, in the same order as a scan of all */
        int sr_end = sh + MAX_SHIFT_DIST < t->nr - 1 ? sh + MAX_SHIFT_DIST : t->nr - 1;
        for (int sr = sh - MAX_SHIFT_DIST > 0 ? sh - MAX_SHIFT_DIST : 0; sr <= sr_end; sr++) {
            for (int len = 0; len < MAX_SHIFT_SIZE && t->words[sh + len] == t->ref[sr + len];) {
                len++;
                int before = *checked;
                try_block(t, pre, sh, sr, len, &best, checked);
                /* checked only after a block that was tried, as sacreBLEU does */
                if (*checked != before && *checked >= MAX_SHIFT_CANDIDATES) return best;
                if (sh + len == t->nh || sr + len == t->nr) break;
            }
        }
    }
    return best;
}

int ter_edits(int64_t *edits, const uint32_t *hyp, int nh, const uint32_t *ref, int nr, nmt_err *err)
{
    if (nr == 0) { /* every hypothesis word is an edit, and there is no length to divide by */
        *edits = nh;
        return NMT_OK;
    }
    ted t;
    if (ted_init(&t, hyp, nh, ref, nr))
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for the edit distance of %d x %d words", nh, nr);
    int checked = 0, shifts = 0;
    int32_t dist;
    for (;;) {
        dist = full_distance(&t);
        align_words(&t);
        shift s = best_shift(&t, dist, &checked);
        /* reaching the limit ends the search without applying the shift just found */
        if (checked >= MAX_SHIFT_CANDIDATES || !s.found || s.gain <= 0) break;
        shifts++;
        uint32_t *x = t.words;
        t.words = t.best;
        t.best = x;
    }
    *edits = (int64_t)shifts + dist;
    ted_free(&t);
    return NMT_OK;
}

/* ======================= corpus statistics ======================= */

static seg_prep prep_of(const ter_opts *o)
{
    seg_prep p = {o->normalized ? SEG_TOK_TERCOM : SEG_TOK_NONE, !o->case_sensitive, o->no_punct};
    return p;
}

int ter_add_sentence(ter_stats *st, const char *hyp, const char *const *refs, int nrefs,
                     const ter_opts *opts, nmt_err *err)
{
    ter_opts def = {0};
    seg_prep p = prep_of(opts ? opts : &def);
    segment *segs;
    int nseg;
    int rc = segments_init(&segs, &nseg, hyp, refs, nrefs, &p, err);
    if (rc) return rc;
    int64_t best = -1, ref_words = 0;
    for (int s = 1; s < nseg && !rc; s++) {
        int64_t e;
        rc = ter_edits(&e, segs[0].ids, (int)segs[0].ntok, segs[s].ids, (int)segs[s].ntok, err);
        ref_words += (int64_t)segs[s].ntok;
        if (!rc && (best < 0 || e < best)) best = e; /* the first of the fewest */
    }
    if (!rc) {
        st->edits += best;
        st->ref_len += (double)ref_words / (double)(nseg - 1); /* Python's int / int */
    }
    segments_free(segs, nseg);
    return rc;
}

double ter_compute(const ter_stats *st)
{
    if (st->ref_len > 0) return 100.0 * ((double)st->edits / st->ref_len);
    return st->edits > 0 ? 100.0 : 0.0;
}

int ter_sentence(double *score, const char *hyp, const char *const *refs, int nrefs,
                 const ter_opts *opts, nmt_err *err)
{
    ter_stats st = {0, 0.0};
    int rc = ter_add_sentence(&st, hyp, refs, nrefs, opts, err);
    if (!rc) *score = ter_compute(&st);
    return rc;
}

int ter_tokenize(char **out, const char *line, const ter_opts *opts, nmt_err *err)
{
    ter_opts def = {0};
    seg_prep p = prep_of(opts ? opts : &def);
    segment s;
    int rc = segment_init(&s, line, &p, err);
    if (rc) return rc;
    rc = segment_join(out, &s, err);
    segment_free(&s);
    return rc;
}

int ter_signature(char *buf, size_t size, const ter_opts *opts, int nrefs, const char *version)
{
    ter_opts def = {0};
    const ter_opts *o = opts ? opts : &def;
    return snprintf(buf, size, "nrefs:%d|case:%s|tok:tercom|norm:%s|punct:%s|asian:no|version:%s", nrefs,
                    o->case_sensitive ? "mixed" : "lc", o->normalized ? "yes" : "no", o->no_punct ? "no" : "yes",
                    version);
}
