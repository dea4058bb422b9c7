/* opt_names.c: the option tables' spellings (opt.h): which option a spelling names, and the
 * nearest known spelling for "did you mean". The parser (opt.c) and the option files' reader
 * (opt_config.c) both look options up; the parser reads option files, so the lookups live
 * below the two. */
#include <stdio.h>
#include <string.h>

#include "opt.h"

/* Does one of o's space-separated spellings equal s[0..len)? */
int opt_has_name(const opt *o, const char *s, size_t len)
{
    for (const char *p = o->names; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && !strncmp(p, s, len)) return 1;
        p += n;
        while (*p == ' ') p++;
    }
    return 0;
}

opt *opt_lookup(opt *t, const char *s, size_t len)
{
    for (; t->kind != OPTK_END; t++)
        if (t->kind != OPTK_HEAD && opt_has_name(t, s, len)) return t;
    return NULL;
}

/* Edit distance of two short names, a swap of neighbours counting as one edit ("widht" is one
 * from "width"); names are cut at 31 characters. */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b), d[32][32];
    if (la > 31) la = 31;
    if (lb > 31) lb = 31;
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* The known spelling closest to an unknown one, if any is close: a third of its letters edited
 * (one for short names), or one a prefix of the other (--hidden, --hid). */
static const char *closest(const opt *t, const char *s, char *buf, size_t size)
{
    const char *bare = s + strspn(s, "-");
    size_t blen = strlen(bare);
    int limit = blen >= 6 ? (int)(blen / 3) : 1, best = limit + 1;
    for (; t->kind != OPTK_END; t++) {
        if (t->kind == OPTK_HEAD) continue;
        for (const char *p = t->names; *p;) {
            size_t n = strcspn(p, " "), dashes = strspn(p, "-");
            char cand[64];
            snprintf(cand, sizeof cand, "%.*s", (int)(n - dashes), p + dashes);
            size_t clen = strlen(cand);
            int d = distance(bare, cand);
            /* a prefix is close enough, but after any nearer spelling */
            if (d > limit && clen >= 3 && blen >= 3 && !strncmp(cand, bare, blen < clen ? blen : clen)) d = limit;
            if (d < best) { /* near an old spelling: the new one */
                best = d;
                if (t->kind == OPTK_OLD) snprintf(buf, size, "%s", t->help);
                else snprintf(buf, size, "%.*s", (int)n, p);
            }
            p += n;
            while (*p == ' ') p++;
        }
    }
    return best <= limit ? buf : NULL;
}

opt *opt_find_long(opt_cmd *c, const char *key)
{
    char name[80];
    snprintf(name, sizeof name, "--%s", key);
    opt *o = opt_lookup(c->opts, name, strlen(name));
    if (o && o->kind == OPTK_OLD) o = opt_lookup(c->opts, o->help, strlen(o->help));
    return o;
}

const char *opt_closest(const opt_cmd *c, const char *key, char *buf, size_t size)
{
    return closest(c->opts, key, buf, size);
}
