/* aer.h: alignment quality of word alignments and attention matrices against human gold links:
 * precision, recall and AER (Och & Ney 2003), and soft AER, SAER (Tu et al. 2016), summed over
 * a corpus; plus strict readers for the gold, test and soft-matrix files (alignio.c).
 *
 * Terms. A link (i, j) joins source word i and target word j, both 0-based; "source" is the
 * language written first in a gold folder's name (en for en-fr). S = sure gold links, P = sure
 * and possible gold links (S is a subset of P), A = the links under test. Over the whole corpus,
 * counts first summed over sentences and then divided (MODEL.md 6; data/alignment/README.md):
 *
 *     precision = |A n P| / |A|      recall = |A n S| / |S|
 *     AER  = 1 - (|A n S| + |A n P|) / (|A| + |S|)
 *     SAER = 1 - (|M_A . M_S| + |M_A . M_P|) / (|M_A| + |M_S|)
 *
 * where M_A is the attention matrix, M_S and M_P the 0/1 matrices of S and P, . the
 * element-wise product and |M| the sum of a matrix's entries (so |M_S| = |S|). A ratio whose
 * denominator is 0 (precision with no test link, AER with no test and no sure link) is NaN.
 *
 * Soft-matrix file (what `nmt align --soft` writes, what aer_soft_read reads): for each sentence
 * pair of the corpus, in order, Ty lines, one per target word j = 0..Ty-1, each holding the Tx
 * weights alpha[j][0..Tx-1] of that target word over the source words as decimal numbers
 * separated by single spaces (a C "%.6g" is fine). An empty line follows every sentence (after
 * the last one it may be left out). There is no row or column for EOS: Ty and Tx are the token
 * counts of the gold sentence pair, so a row need not sum to 1 (the weight on the source EOS is
 * dropped). Every value must be finite and in [0, 1]; Tx and Ty are at least 1, so two empty
 * lines in a row are an error. Example, two sentences (Tx 3, Ty 2 and Tx 1, Ty 1):
 *
 *     0.9 0.05 0.05
 *     0.1 0.2 0.7
 *
 *     1
 *
 * Every reader is strict: a malformed line, an index that does not fit, a link listed twice or
 * files that disagree fail with NMT_ERR_FORMAT / NMT_ERR_MISMATCH and a "file:line: ..." message.
 * The functions are reentrant; nothing is global.
 */
#ifndef NMT_AER_H
#define NMT_AER_H

#include <stddef.h>

#include "nmt.h"

typedef struct aer_link {
    int i, j;  /* source and target word, 0-based, whatever the file's base and order */
    int sure;  /* 1: in S; 0: possible only (in P, not in S). Always 1 in a test alignment. */
    long line; /* line of the file it was read from (for messages) */
} aer_link;

/* A corpus of link sets, one per sentence pair: sentence k holds links[off[k] .. off[k+1]),
 * sorted by (i, j), each pair once. A gold set holds P, with `sure` marking S. */
typedef struct aer_align {
    char *path;      /* the file read, for messages */
    size_t n_sent;
    size_t *off;     /* n_sent + 1 offsets */
    aer_link *links;
    long *line;      /* n_sent: line of sentence k (NAACL: of its first link; 0 if it has none) */
    long n_lines;    /* lines in the file */
    /* How the file writes a link, so that messages can quote it as written: */
    int format;      /* enum aer_gold_format, or -1 for a test alignment */
    int base;        /* 0 or 1 */
    int swapped;     /* 1: the file writes target first */
} aer_align;

/* Gold formats. Every one of data/alignment/ is read, converted files and originals alike. */
enum aer_gold_format {
    /* The converted files (<split>.talp / .sure / .possible) and plain Pharaoh: one line per
     * sentence, "i-j" sure, "i?j" (or "ipj") possible; 0-based, source first. */
    AER_GOLD_TALP = 0,
    /* awesome-align *.gold: the same notation ("i-j", "ipj"), but 1-based. */
    AER_GOLD_AWESOME = 1,
    /* ALIBI ali_w2w_*.txt: "id<TAB>links" with ids 0, 1, 2, ..., "i-j" / "ipj", 0-based, French
     * (the target of en-fr) first: the reader swaps, so that links come out English first. */
    AER_GOLD_ALIBI = 2,
    /* NAACL 2003 WPT (*.wa): one link per line, "sent pos_src pos_tgt [S|P] [confidence]",
     * sentences numbered from 1, positions 1-based with 0 = NULL (such links are dropped), S
     * when the flag is absent, the confidence ignored; sentence count = largest number. With
     * base 0 it also reads Bicici's de-en.ref.wa (positions 0-based, no NULL). */
    AER_GOLD_NAACL = 3
};

typedef struct aer_gold_opts {
    int format;  /* enum aer_gold_format */
    int base;    /* index base of the positions: -1 = the format's own (0 talp/alibi, 1 awesome/naacl) */
    int reverse; /* 1: swap i and j as read (on top of ALIBI's own swap) */
} aer_gold_opts;

aer_gold_opts aer_gold_opts_default(void); /* talp, base -1, no reverse */
int aer_gold_format_parse(const char *name); /* "talp", "awesome", "alibi", "naacl"; -1 if unknown */
const char *aer_gold_format_name(int format);

/* Reads a gold alignment (S and P together, as in a .talp file). */
int aer_gold_read(aer_align *out, const char *path, const aer_gold_opts *opt, nmt_err *err);

/* Reads S from sure_path and P (= S and the possible links) from possible_path, both in opt's
 * format: the sure file must hold no possible link, every sure link must be in P and the two
 * must have the same number of sentences. The links (and out->path) are possible_path's. */
int aer_gold_read_pair(aer_align *out, const char *sure_path, const char *possible_path,
                       const aer_gold_opts *opt, nmt_err *err);

/* Reads a test alignment: Pharaoh, one line per sentence (an empty line = no link), "i-j"
 * 0-based, source first, or target first ("j-i") when reverse is 1. */
int aer_test_read(aer_align *out, const char *path, int reverse, nmt_err *err);

void aer_align_free(aer_align *a); /* frees and zeroes; NULL and zeroed structs are fine */

/* Soft alignment matrices, in the format described at the top of this file. */
typedef struct aer_soft {
    char *path;
    size_t n_sent;
    int *rows, *cols; /* Ty and Tx of each sentence */
    size_t *off;      /* n_sent + 1 offsets into val */
    double *val;      /* sentence k: row-major (Ty,Tx); val[off[k] + j*Tx + i] = alpha[j][i] */
    long *line;       /* first line of each sentence */
    long n_lines;
} aer_soft;

int aer_soft_read(aer_soft *out, const char *path, nmt_err *err);
void aer_soft_free(aer_soft *s);

/* The hard alignment of soft matrices: each target word linked to its arg-max source word
 * (ties: the lowest i; a row that is all zeros gets no link). */
int aer_soft_argmax(aer_align *out, const aer_soft *s, nmt_err *err);

/* Sentence lengths (Tx, Ty), for range checks. */
typedef struct aer_lengths {
    char *src_what, *tgt_what; /* where they came from, for messages */
    size_t n_sent;
    int *src, *tgt;
} aer_lengths;

/* Counts the words of each line of two tokenized files (sentence pairs, one per line), split
 * at runs of ASCII blanks as every command splits them (text/words.h, README "Conventions");
 * files with different numbers of lines are an error. */
int aer_lengths_read(aer_lengths *out, const char *src_path, const char *tgt_path, nmt_err *err);
/* The lengths that soft matrices imply (Tx = columns, Ty = rows). */
int aer_lengths_from_soft(aer_lengths *out, const aer_soft *s, nmt_err *err);
void aer_lengths_free(aer_lengths *l);

/* Checks that `a` has len->n_sent sentences and every link fits its sentence's lengths. */
int aer_check_range(const aer_align *a, const aer_lengths *len, nmt_err *err);
/* Checks that every soft matrix is exactly (Ty, Tx) of len. */
int aer_soft_check_shape(const aer_soft *s, const aer_lengths *len, nmt_err *err);

/* Corpus totals; start from a zeroed struct (aer_stats st = {0}). */
typedef struct aer_stats {
    size_t n_sent;                  /* sentences given to aer_add_sentence */
    size_t a, s, p, a_s, a_p;       /* |A|, |S|, |P|, |A n S|, |A n P| */
    size_t soft_sent;               /* sentences given to aer_add_soft */
    double m_a, m_s, m_as, m_ap;    /* |M_A|, |M_S|, |M_A . M_S|, |M_A . M_P| */
} aer_stats;

/* One sentence: gold and test links sorted by (i, j) without duplicates (what the readers give;
 * NMT_ERR_ARG otherwise). Adds to n_sent, a, s, p, a_s and a_p. */
int aer_add_sentence(aer_stats *st, const aer_link *gold, size_t n_gold, const aer_link *test,
                     size_t n_test, nmt_err *err);
/* One sentence's soft matrix m (Ty,Tx), row-major, values finite (NMT_ERR_NUMERIC) and in
 * [0, 1] (NMT_ERR_ARG); every gold link must fall inside it (NMT_ERR_MISMATCH).
 * Adds to soft_sent, m_a, m_s, m_as and m_ap. */
int aer_add_soft(aer_stats *st, const aer_link *gold, size_t n_gold, const double *m, int ty,
                 int tx, nmt_err *err);

/* Whole corpora, adding to st: the same number of sentences is required (NMT_ERR_MISMATCH,
 * "test.txt:446: ..."), and a gold link outside a soft matrix is an error with the gold file's
 * line. */
int aer_eval(aer_stats *st, const aer_align *gold, const aer_align *test, nmt_err *err);
int aer_eval_soft(aer_stats *st, const aer_align *gold, const aer_soft *soft, nmt_err *err);

double aer_precision(const aer_stats *st); /* |A n P| / |A| */
double aer_recall(const aer_stats *st);    /* |A n S| / |S| */
double aer_rate(const aer_stats *st);      /* AER */
double aer_soft_rate(const aer_stats *st); /* SAER */

/* Shared by aer.c and alignio.c only. The error for a file of n sentences that should have
 * n_ref (those of `ref`): "path:N_LINES: ends after n sentences; ref has n_ref" or, when it has
 * more, "path:EXTRA_LINE: sentence n_ref+1 has no counterpart: ref has n_ref sentences", with
 * extra_line the line of that sentence. Returns NMT_ERR_MISMATCH. */
int aer_count_mismatch(nmt_err *err, const char *path, long n_lines, long extra_line, size_t n,
                       const char *ref, size_t n_ref);
/* A link as a's file writes it ("3-4", "3?4", "4p5", "'4 5'"), for messages. */
void aer_link_text(char *buf, size_t n, const aer_align *a, const aer_link *l);

#endif
