/* opt.c: the option parser and --help printer of every nmt subcommand (opt.h). argv is read in
 * one walk that only sorts it into options with their values and positional arguments; nothing
 * is stored until the walk is done, so --help anywhere wins, presets (OPT_FIRST) go first, and
 * the rest is applied in the order given. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "opt.h"
#include "opt_config.h"
#include "text/unicode.h"

/* ------------------------------------------------------------------ names (the lookups are in opt_names.c) */

/* The spelling messages use: the first long one ("--width" of "-w --width"). */
static void main_name(const opt *o, char *buf, size_t size)
{
    const char *p = strstr(o->names, "--"), *s = p && (p == o->names || p[-1] == ' ') ? p : o->names;
    size_t n = strcspn(s, " ");
    snprintf(buf, size, "%.*s", (int)n, s);
}

static int is_option(const opt *o) { return o->kind != OPTK_HEAD && o->kind != OPTK_OLD; }

/* ------------------------------------------------------------------ errors */

static int usage_error(const opt_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const opt_cmd *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt %s: error: ", c->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CMD_USAGE;
}

/* ------------------------------------------------------------------ values */

/* Integers in [lo, hi]; the table's double bounds are clamped to long (LONG_MAX does not fit a
 * double exactly). */
static int parse_long(const opt_cmd *c, const char *name, const char *s, const opt *o, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    long lo = o->lo <= (double)LONG_MIN ? LONG_MIN : (long)o->lo;
    long hi = o->hi >= (double)LONG_MAX ? LONG_MAX : (long)o->hi;
    if (!*s || *end) return usage_error(c, "%s '%s': not an integer", name, s);
    if (errno || v < lo || v > hi) return usage_error(c, "%s %s: out of range [%ld, %ld]", name, s, lo, hi); /* ERANGE: past a long */
    *out = v;
    return 0;
}

static int parse_double(const opt_cmd *c, const char *name, const char *s, const opt *o, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    int open_hi = (o->flags & OPT_BELOW_HI) != 0, open_lo = (o->flags & OPT_ABOVE_LO) != 0;
    /* ERANGE alone is no error: an underflow reads as the nearest double (0 or subnormal), an
     * overflow as infinity, and the range below judges either */
    if (!*s || *end || v != v) return usage_error(c, "%s '%s': not a number", name, s);
    if (v < o->lo || v > o->hi || (open_hi && v == o->hi) || (open_lo && v == o->lo))
        return usage_error(c, "%s %s: out of range %s%g, %g%s", name, s, open_lo ? "(" : "[", o->lo, o->hi, open_hi ? ")" : "]");
    *out = v;
    return 0;
}

/* The index of val among "a|b|c", or -1. */
static int choice_index(const char *values, const char *val)
{
    int k = 0;
    for (const char *p = values;; k++) {
        size_t n = strcspn(p, "|");
        if (strlen(val) == n && !strncmp(p, val, n)) return k;
        if (!p[n]) return -1;
        p += n + 1;
    }
}

/* The name an OPTK_CHOICE option holds now: *len bytes at the returned pointer, into o->arg. */
static const char *choice_name(const opt *o, int *len)
{
    const char *p = o->arg;
    for (int n = *(int *)o->dst; n > 0 && strchr(p, '|'); n--) p = strchr(p, '|') + 1;
    *len = (int)strcspn(p, "|");
    return p;
}

static int bad_choice(const opt_cmd *c, const char *name, const char *val, const char *values)
{
    char list[256];
    size_t k = 0;
    int count = 1;
    for (const char *p = values; *p; p++) count += *p == '|';
    for (const char *p = values; *p && k + 8 < sizeof list; count--) {
        size_t n = strcspn(p, "|");
        k += (size_t)snprintf(list + k, sizeof list - k, "%.*s%s", (int)n, p,
                              count > 2 ? ", " : count == 2 ? " or " : "");
        p += n + (p[n] == '|');
    }
    return usage_error(c, "%s '%s': expected %s", name, val, list);
}

/* Stores one value (val NULL for a flag); name is the spelling used. Returns 0 or CMD_USAGE
 * after saying why. */
static int apply(const opt_cmd *c, opt *o, const char *name, const char *val, int nth)
{
    long l = 0;
    double x = 0;
    const char *why;
    if (nth == 0 && ++o->seen > 1 && (o->flags & OPT_ONCE)) return usage_error(c, "%s given twice", name);
    if (nth == 0) o->ngiven = 0;
    if (val && o->ngiven++ < (int)(sizeof o->given / sizeof *o->given)) o->given[o->ngiven - 1] = val;
    if (val && !*val && (o->flags & OPT_NONEMPTY)) return usage_error(c, "%s needs a non-empty value", name);
    switch (o->kind) {
    case OPTK_FLAG:
        *(int *)o->dst = (int)o->lo;
        if (o->dst2) *(int *)o->dst2 = (int)o->lo;
        return 0;
    case OPTK_STR: *(const char **)o->dst = val; return 0;
    case OPTK_INT:
        if (parse_long(c, name, val, o, &l)) return CMD_USAGE;
        *(int *)o->dst = (int)l;
        if (o->dst2) *(int *)o->dst2 = (int)l;
        return 0;
    case OPTK_LONG:
        if (parse_long(c, name, val, o, &l)) return CMD_USAGE;
        *(long *)o->dst = l;
        return 0;
    case OPTK_DBL:
        if (parse_double(c, name, val, o, &x)) return CMD_USAGE;
        *(double *)o->dst = x;
        return 0;
    case OPTK_CHOICE:
        if (choice_index(o->arg, val) < 0) return bad_choice(c, name, val, o->arg);
        *(int *)o->dst = choice_index(o->arg, val);
        return 0;
    case OPTK_ENUM:
        if (o->to_int(val) < 0) return usage_error(c, "%s '%s': expected %s", name, val, o->expect);
        *(int *)o->dst = o->to_int(val);
        return 0;
    case OPTK_FN:
        why = o->fn(o->dst, val, nth);
        return why ? usage_error(c, "%s '%s': %s", name, val, why) : 0;
    }
    return usage_error(c, "%s: not an option", name); /* a table error: heading or old spelling */
}

/* ------------------------------------------------------------------ the walk */

typedef struct item {
    opt *o;
    const char *val;
    int nth;
    int old;        /* spelled the old way: warn */
    int at;         /* the option's index in argv */
    char name[48];  /* as spelled, for messages */
} item;

/* Sorts argv into items and positional arguments. Returns 0, or CMD_USAGE after saying why. */
static int walk(opt_cmd *c, int argc, char **argv, item *it, int *nit, char **args, int *nargs)
{
    int only_args = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || !a[1]) {
            if (*nargs >= c->max_args)
                return c->args_hint ? usage_error(c, "unexpected argument '%s' (%s)", a, c->args_hint)
                                    : usage_error(c, "unexpected argument '%s' (nmt %s --help)", a, c->name);
            args[(*nargs)++] = argv[i];
            continue;
        }
        if (!strcmp(a, "--")) { only_args = 1; continue; }
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        opt *o = opt_lookup(c->opts, a, len), *as = o;
        if (o && o->kind == OPTK_OLD) o = opt_lookup(c->opts, o->help, strlen(o->help));
        char name[128], buf[64];
        if (!o) {
            snprintf(name, sizeof name, "%.*s", (int)len, a);
            const char *near = opt_closest(c, name, buf, sizeof buf);
            return usage_error(c, "unknown option '%s'%s%s%s (nmt %s --help lists them)", name,
                               near ? "; did you mean " : "", near ? near : "", near ? "?" : "", c->name);
        }
        snprintf(name, sizeof name, "%.*s", (int)len, a);
        const char *val = NULL;
        if (o->kind == OPTK_FLAG && eq) return usage_error(c, "%s takes no value", name);
        if (o->kind != OPTK_FLAG) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else return usage_error(c, "%s needs a value", name);
        }
        /* nargs-style options take the next arguments too, while the option wants them */
        for (int nth = 0; nth == 0 || (val && (o->flags & OPT_MORE) && i + 1 < argc && argv[i + 1][0] != '-' &&
                                       !o->fn(NULL, argv[i + 1], nth)); nth++) {
            const char *v = nth ? argv[++i] : val; /* before the item reads i: an initializer list has no order */
            item *x = &it[(*nit)++];
            *x = (item){o, v, nth, nth == 0 && as != o, i, ""};
            snprintf(x->name, sizeof x->name, "%.*s", (int)len, a);
        }
    }
    return 0;
}

/* The option file named on the command line, if any, as items (*cit, *ncit), each item's line of
 * the file in its at; the options the command line gives again are left out, so that it
 * overrides the file. 0, or an exit status. */
static int config_items(opt_cmd *c, const item *it, int nit, item **cit, int *ncit, const char **file)
{
    *cit = NULL;
    *ncit = 0;
    *file = NULL;
    for (int k = 0; k < nit; k++)
        if (it[k].o->flags & OPT_CONFIG) *file = it[k].val;
    if (!*file) return 0;
    char **cargv;
    int cargc, *line, nargs = 0;
    if (opt_config_read(c, *file, &cargv, &cargc, &line)) return CMD_ERR;
    item *all = malloc(sizeof *all * (size_t)(cargc > 0 ? cargc : 1));
    opt_cmd nopos = *c;
    nopos.max_args = 0; /* a file holds options only */
    int rc = all ? walk(&nopos, cargc, cargv, all, ncit, NULL, &nargs) : CMD_ERR;
    int n = 0;
    for (int k = 0; !rc && k < *ncit; k++) {
        int again = 0;
        for (int j = 0; j < nit && !again; j++) again = it[j].o == all[k].o;
        if (again) continue;
        all[n] = all[k];
        all[n++].at = line[all[k].at];
    }
    *ncit = n;
    free(cargv);
    free(line);
    if (rc) { free(all); return rc; }
    *cit = all;
    return 0;
}

/* Applies the items, presets (OPT_FIRST) first; a value from the file names its line when it is
 * refused. */
static int apply_items(opt_cmd *c, item *it, int nit, int from_file, const char *file, int pass)
{
    for (int k = 0; k < nit; k++) {
        if (((it[k].o->flags & OPT_FIRST) != 0) != (pass == 0)) continue;
        if (it[k].old) {
            char now[64];
            main_name(it[k].o, now, sizeof now);
            fprintf(stderr, "nmt %s: warning: %s is an old spelling: use %s\n", c->name, it[k].name, now);
        }
        int rc = apply(c, it[k].o, it[k].name, it[k].val, it[k].nth);
        if (rc) {
            if (!from_file) return rc;
            fprintf(stderr, "nmt %s: (the value is from %s:%d)\n", c->name, file, it[k].at);
            return CMD_ERR; /* a bad file is bad input, not bad usage */
        }
    }
    return 0;
}

int opt_parse(opt_cmd *c, int argc, char **argv, char **args, int *nargs)
{
    item *it = malloc(sizeof *it * (size_t)(argc > 0 ? argc : 1)), *cit = NULL;
    if (!it) {
        fprintf(stderr, "nmt %s: error: out of memory\n", c->name);
        return CMD_ERR;
    }
    /* --help anywhere before "--" wins over everything else, errors included */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            opt_help(stdout, c);
            free(it);
            return CMD_OK;
        }
    int nit = 0, ncit = 0;
    const char *file = NULL;
    *nargs = 0;
    int rc = walk(c, argc, argv, it, &nit, args, nargs);
    if (!rc) rc = config_items(c, it, nit, &cit, &ncit, &file);
    for (int pass = 0; pass < 2 && !rc; pass++) {
        rc = apply_items(c, cit, ncit, 1, file, pass);
        if (!rc) rc = apply_items(c, it, nit, 0, NULL, pass);
    }
    free(it);
    free(cit);
    return rc ? rc : OPT_GO;
}

/* The next UTF-8 character of s (NUL-terminated) into *cp, and its length; 0 where s is not
 * well-formed UTF-8 there. */
static int utf8_next(const unsigned char *s, unsigned *cp)
{
    uint32_t c = 0;
    int n = utf8_decode((const char *)s, strnlen((const char *)s, 4), &c);
    *cp = c;
    return n > 0 ? n : 0;
}

/* A character a YAML file may hold as it is, other than a line break or a tab (YAML 1.1 5.1, as
 * libyaml's reader checks it; NEL, LS and PS break lines there). */
static int yaml_plain_char(unsigned cp)
{
    return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xd7ff && cp != 0x2028 && cp != 0x2029) ||
           (cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/* Whether v reads back from a plain scalar as itself: printable, no blanks, none of YAML's
 * indicators (a value ending in ':' starts a mapping), not a word the reader takes for a switch or
 * null. Anything else is double-quoted, which holds every character. */
static int yaml_plain_ok(const char *v)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
    if (!*v || !(isalnum((unsigned char)v[0]) || strchr("_./", v[0]) || (unsigned char)v[0] >= 0x80)) return 0;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strcasecmp(v, words[i])) return 0;
    unsigned cp;
    for (const unsigned char *p = (const unsigned char *)v; *p;) {
        int n = utf8_next(p, &cp);
        if (!n || !yaml_plain_char(cp) || (cp < 0x80 && strchr(" :#,[]{}'\"", (int)cp))) return 0;
        p += n;
    }
    return 1;
}

/* A value as YAML: plain when it reads back as the same string, else double-quoted with escapes.
 * -1 for a value that is not UTF-8, which a YAML file cannot hold: nothing is written. */
static int dump_value(FILE *f, const char *v)
{
    if (utf8_find_invalid(v, strlen(v)) >= 0) return -1;
    unsigned cp;
    if (yaml_plain_ok(v)) { fputs(v, f); return 0; }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)v; *p;) {
        int n = utf8_next(p, &cp);
        if (cp == '"' || cp == '\\') fprintf(f, "\\%c", (int)cp);
        else if (cp == '\t') fputs("\\t", f);
        else if (cp == '\n') fputs("\\n", f);
        else if (cp == '\r') fputs("\\r", f);
        else if (!yaml_plain_char(cp)) fprintf(f, cp < 0x100 ? "\\x%02X" : cp < 0x10000 ? "\\u%04X" : "\\U%08X", cp);
        else fwrite(p, 1, (size_t)n, f);
        p += n;
    }
    fputc('"', f);
    return 0;
}

/* One option's line(s) of the dump, or nothing; -1 when a value is not UTF-8 (a comment says so
 * in place of the option), -2 when out of memory. */
static int dump_option(FILE *f, const opt *o)
{
    char name[64], num[64];
    main_name(o, name, sizeof name);
    if (strncmp(name, "--", 2) || (o->flags & (OPT_CONFIG | OPT_DUMP))) return 0; /* short spellings only: not in a file */
    if ((o->flags & OPT_IF_GIVEN) && !o->seen) return 0; /* its default is "off", whatever the variable holds */
    const char *key = name + 2, *v = NULL;
    int len;
    switch (o->kind) {
    case OPTK_FLAG: /* the switch that decided, not each one given: --no-tied-embeddings from a file,
                     * --tied-embeddings on the command line dumped both, and read back untied */
        if (o->seen && *(int *)o->dst == (int)o->lo) fprintf(f, "%s: true\n", key);
        return 0;
    case OPTK_INT: snprintf(num, sizeof num, "%d", *(int *)o->dst); v = num; break;
    case OPTK_LONG: snprintf(num, sizeof num, "%ld", *(long *)o->dst); v = num; break;
    case OPTK_DBL: /* the shortest spelling that reads back as the same double: 0.2, not 0.20000000000000001 */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(num, sizeof num, "%.*g", prec, *(double *)o->dst);
            if (strtod(num, NULL) == *(double *)o->dst) break;
        }
        v = num;
        break;
    case OPTK_STR: v = *(const char **)o->dst; break;
    case OPTK_CHOICE:
        v = choice_name(o, &len);
        snprintf(num, sizeof num, "%.*s", len, v);
        v = num;
        break;
    default: /* names and lists: as they were given */
        if (o->ngiven == 1) v = o->given[0];
    }
    /* a default outside the option's range means "automatic" (threads 0: all cores): not a value */
    int numeric = o->kind == OPTK_INT || o->kind == OPTK_LONG || o->kind == OPTK_DBL;
    if (numeric && !o->seen && (strtod(num, NULL) < o->lo || strtod(num, NULL) > o->hi)) return 0;
    const char *const *vals = v ? &v : o->given;
    int n = v ? 1 : o->ngiven > 1 && o->ngiven <= (int)(sizeof o->given / sizeof *o->given) ? o->ngiven : 0;
    char *text = NULL;
    size_t size = 0;
    FILE *m = n ? open_memstream(&text, &size) : NULL; /* the lines, kept back until every value is known to fit */
    if (n && !m) return -2;
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        fputs(v ? " " : "\n  - ", m);
        bad = dump_value(m, vals[i]);
    }
    if (m && fclose(m)) { free(text); return -2; }
    if (bad) { /* the value shown in the comment, control characters as '?' (a checkpoint's writer turns
                * the bytes that are not UTF-8 into U+FFFD) */
        fprintf(f, "# %s: left out: its value is not UTF-8, which a YAML file cannot hold:", key);
        for (int i = 0; i < n; i++) {
            fputc(' ', f);
            for (const char *p = vals[i]; *p; p++) fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
        }
        fputc('\n', f);
    }
    else if (n) fprintf(f, "%s:%s\n", key, text);
    free(text);
    return bad ? -1 : 0;
}

char *opt_dump(const opt_cmd *c, char *lost, size_t size_lost)
{
    char *text = NULL;
    size_t size = 0;
    int rc = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    *lost = 0;
    for (const opt *o = c->opts; o->kind != OPTK_END && rc > -2; o++) {
        rc = is_option(o) ? dump_option(f, o) : 0;
        if (rc == -1 && !*lost) main_name(o, lost, size_lost);
    }
    if (fclose(f) || rc == -2) { free(text); return NULL; }
    return text;
}

int opt_given(const opt_cmd *c, const char *name)
{
    for (const opt *o = c->opts; o->kind != OPTK_END; o++)
        if (is_option(o) && opt_has_name(o, name, strlen(name))) return o->seen;
    return 0;
}

/* ------------------------------------------------------------------ --help */

/* "-w, --width N" */
static int label(const opt *o, char *buf, size_t size)
{
    size_t k = 0;
    for (const char *p = o->names; *p && k < size;) {
        size_t n = strcspn(p, " ");
        k += (size_t)snprintf(buf + k, size - k, "%s%.*s", k ? ", " : "", (int)n, p);
        p += n;
        while (*p == ' ') p++;
    }
    if (o->arg && k < size) k += (size_t)snprintf(buf + k, size - k, " %s", o->arg);
    return (int)(k < size ? k : size - 1);
}

/* The value an option holds before parsing, for "{}" in its help. */
static void print_default(FILE *f, const opt *o)
{
    const char *p;
    int k;
    switch (o->kind) {
    case OPTK_INT: fprintf(f, "%d", *(int *)o->dst); break;
    case OPTK_LONG: fprintf(f, "%ld", *(long *)o->dst); break;
    case OPTK_DBL: fprintf(f, "%g", *(double *)o->dst); break;
    case OPTK_STR: fputs(*(const char **)o->dst ? *(const char **)o->dst : "none", f); break;
    case OPTK_CHOICE:
        p = choice_name(o, &k);
        fprintf(f, "%.*s", k, p);
        break;
    default: break;
    }
}

/* The help text at column col: "{}" replaced by the default, "{lo}" and "{hi}" by the range,
 * each new line indented. */
static void print_text(FILE *f, const opt *o, int col)
{
    for (const char *p = o->help; *p; p++) {
        if (p[0] == '{' && p[1] == '}') {
            print_default(f, o);
            p++;
        } else if (!strncmp(p, "{lo}", 4) || !strncmp(p, "{hi}", 4)) {
            fprintf(f, "%g", p[1] == 'l' ? o->lo : o->hi);
            p += 3;
        } else {
            fputc(*p, f);
            if (*p == '\n') fprintf(f, "%*s", col, "");
        }
    }
    fputc('\n', f);
}

void opt_help(FILE *f, const opt_cmd *c)
{
    char buf[128];
    int width = 10, olds = 0;
    for (const opt *o = c->opts; o->kind != OPTK_END; o++)
        if (is_option(o) && label(o, buf, sizeof buf) > width) width = label(o, buf, sizeof buf);
    if (width > 26) width = 26;
    fputs(c->usage, f);
    for (const opt *o = c->opts; o->kind != OPTK_END; o++) {
        if (o->kind == OPTK_OLD) { olds++; continue; }
        if (o->kind == OPTK_HEAD) { fprintf(f, "%s\n", o->names); continue; }
        int n = label(o, buf, sizeof buf);
        if (n > width) fprintf(f, "  %s\n%*s", buf, width + 4, "");
        else fprintf(f, "  %-*s  ", width, buf);
        print_text(f, o, width + 4);
    }
    fprintf(f, "  %-*s  this help\n", width, "-h, --help");
    if (olds) fputs("Old spellings, still accepted with a warning:\n", f);
    for (const opt *o = c->opts; olds && o->kind != OPTK_END; o++)
        if (o->kind == OPTK_OLD) fprintf(f, "  %-*s  now %s\n", width, o->names, o->help);
    if (c->after) fputs(c->after, f);
}
