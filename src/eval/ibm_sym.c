/* ibm_sym.c: symmetrising two directions' word alignments (ibm.h): intersection, union and the
 * grow-diag family of Koehn et al. (2003), and Viterbi alignments as link lists. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "eval/ibm.h"

static const char *const sym_names[] = {NULL, NULL, "intersect", "union", "grow-diag",
                                        "grow-diag-final", "grow-diag-final-and"};

int ibm_sym_parse(const char *name)
{
    if (!strcmp(name, "gdfa")) return IBM_SYM_GROW_DIAG_FINAL_AND;
    for (int k = IBM_SYM_INTERSECT; k <= IBM_SYM_GROW_DIAG_FINAL_AND; k++)
        if (!strcmp(name, sym_names[k])) return k;
    return -1;
}

const char *ibm_sym_name(int mode)
{
    if (mode == IBM_SYM_FORWARD) return "forward";
    if (mode == IBM_SYM_REVERSE) return "reverse";
    return mode > IBM_SYM_REVERSE && mode <= IBM_SYM_GROW_DIAG_FINAL_AND ? sym_names[mode] : "?";
}

size_t ibm_links_scratch(int n, int m)
{
    return (size_t)(n + m) * sizeof(int) + (size_t)n * (size_t)m;
}

enum { IN_FWD = 1, IN_REV = 2, IN_A = 4 }; /* grid cell bits */

int ibm_viterbi_links(const int *a, int len, int reverse, int *links)
{
    int nl = 0;
    for (int x = 0; x < len; x++) {
        if (a[x] < 0) continue;
        links[2 * nl] = reverse ? x : a[x];
        links[2 * nl + 1] = reverse ? a[x] : x;
        nl++;
    }
    return nl;
}

int ibm_links(int mode, int n, int m, const int *fwd, int nfwd, const int *rev, int nrev,
              void *scratch, int *links)
{
    if (n <= 0 || m <= 0) return nfwd > 0 || nrev > 0 ? -1 : 0;
    /* scratch: how many links each source and target word has in A, then the n x m grid */
    int *src_deg = scratch, *tgt_deg = src_deg + n;
    unsigned char *g = (unsigned char *)(tgt_deg + m);
    memset(scratch, 0, ibm_links_scratch(n, m));
    for (int d = 0; d < 2; d++) {
        const int *l = d ? rev : fwd;
        int nl = d ? nrev : nfwd;
        if ((d ? mode == IBM_SYM_FORWARD : mode == IBM_SYM_REVERSE) || !l) continue;
        for (int k = 0; k < nl; k++) {
            int i = l[2 * k], j = l[2 * k + 1];
            if (i < 0 || i >= n || j < 0 || j >= m) return -1;
            g[(size_t)i * m + j] |= d ? IN_REV : IN_FWD;
        }
    }
    /* the starting set A */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            unsigned char *cell = &g[(size_t)i * m + j];
            int in;
            switch (mode) {
            case IBM_SYM_FORWARD: in = *cell & IN_FWD; break;
            case IBM_SYM_REVERSE: in = *cell & IN_REV; break;
            case IBM_SYM_UNION: in = *cell & (IN_FWD | IN_REV); break;
            default: in = (*cell & (IN_FWD | IN_REV)) == (IN_FWD | IN_REV); break; /* intersection */
            }
            if (in) { *cell |= IN_A; src_deg[i]++; tgt_deg[j]++; }
        }
    if (mode >= IBM_SYM_GROW_DIAG) {
        /* GROW-DIAG (Koehn et al. 2003; the Moses training pseudo-code, see ibm.h) */
        static const int nb[8][2] = {{-1, 0}, {0, -1}, {1, 0}, {0, 1}, {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};
        int added;
        do {
            added = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++) {
                    if (!(g[(size_t)i * m + j] & IN_A)) continue;
                    for (int d = 0; d < 8; d++) {
                        int ii = i + nb[d][0], jj = j + nb[d][1];
                        if (ii < 0 || ii >= n || jj < 0 || jj >= m) continue;
                        unsigned char *cell = &g[(size_t)ii * m + jj];
                        if ((*cell & IN_A) || !(*cell & (IN_FWD | IN_REV))) continue;
                        if (src_deg[ii] && tgt_deg[jj]) continue;
                        *cell |= IN_A;
                        src_deg[ii]++;
                        tgt_deg[jj]++;
                        added = 1;
                    }
                }
        } while (added);
    }
    if (mode == IBM_SYM_GROW_DIAG_FINAL || mode == IBM_SYM_GROW_DIAG_FINAL_AND) {
        /* FINAL(forward), then FINAL(reverse): a directional link whose words are (both, for
         * final-and; either, for final) still unaligned */
        int both = mode == IBM_SYM_GROW_DIAG_FINAL_AND;
        for (int dir = IN_FWD; dir <= IN_REV; dir <<= 1)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++) {
                    unsigned char *cell = &g[(size_t)i * m + j];
                    if ((*cell & IN_A) || !(*cell & dir)) continue;
                    int free_s = !src_deg[i], free_t = !tgt_deg[j];
                    if (both ? !(free_s && free_t) : !(free_s || free_t)) continue;
                    *cell |= IN_A;
                    src_deg[i]++;
                    tgt_deg[j]++;
                }
    }
    int nl = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (g[(size_t)i * m + j] & IN_A) {
                links[2 * nl] = i;
                links[2 * nl + 1] = j;
                nl++;
            }
    return nl;
}
