/* opt_config.c: option files, as Marian's config files: a YAML mapping whose keys are a
 * command's long option names without the dashes, read through libyaml into the arguments the
 * command line would have held ("hid: 256" is --hid 256, "lowercase: true" is --lowercase, a
 * list is an option's several values). opt_parse applies them before the command line, which
 * overrides them option by option. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "opt.h"
#include "opt_config.h"

/* The file's strings live as long as the program: options store pointers to their values. */
static char **kept;
static size_t nkept;

static void free_kept(void)
{
    for (size_t i = 0; i < nkept; i++) free(kept[i]);
    free(kept);
}

static char *keep(const char *s)
{
    static int registered;
    char **k = realloc(kept, (nkept + 1) * sizeof *k);
    char *d = strdup(s);
    if (!k || !d) { free(d); if (k) kept = k; return NULL; }
    kept = k;
    kept[nkept++] = d;
    if (!registered) registered = !atexit(free_kept);
    return d;
}

static int yaml_true(const char *s)
{
    return !strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "yes") || !strcmp(s, "on");
}

static int yaml_false(const char *s)
{
    return !strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "no") || !strcmp(s, "off");
}

/* A growing argument list, each argument with the line of the key it came from. */
typedef struct args { char **v; int *line; int n, cap, cur; } args;

static int push(args *a, const char *s)
{
    if (a->n + 1 >= a->cap) {
        int cap = a->cap ? 2 * a->cap : 16;
        char **v = realloc(a->v, sizeof *v * (size_t)cap);
        if (v) a->v = v;
        int *l = v ? realloc(a->line, sizeof *l * (size_t)cap) : NULL;
        if (l) a->line = l;
        if (!v || !l) return -1;
        a->cap = cap;
    }
    char *k = keep(s);
    if (!k) return -1;
    a->line[a->n] = a->cur;
    a->v[a->n++] = k;
    a->v[a->n] = NULL;
    return 0;
}

static int fail(const char *cmd, const char *path, const yaml_node_t *n, const char *what, const char *detail)
{
    fprintf(stderr, "nmt %s: error: %s:%lu: %s%s\n", cmd, path, n ? (unsigned long)n->start_mark.line + 1 : 0UL, what,
            detail ? detail : "");
    return -1;
}

static int fail_line(const char *cmd, const char *path, unsigned long line, const char *what)
{
    fprintf(stderr, "nmt %s: error: %s:%lu: %s\n", cmd, path, line, what);
    return -1;
}

/* YAML's null: a plain ~, null or nothing. A path or a number of "~" is never meant. */
static int yaml_null(const yaml_node_t *v)
{
    const char *s = (const char *)v->data.scalar.value;
    return v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* A value as an argument: refused when it is null or holds a NUL, which a C string would cut. */
static int value_ok(opt_cmd *c, const char *path, const yaml_node_t *v, const char *key)
{
    if (yaml_null(v)) return fail(c->name, path, v, "no value (null) for ", key);
    if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
        return fail(c->name, path, v, "a NUL character in the value of ", key);
    return 0;
}

/* One key and its value as arguments: "--key" then the values; a flag true is "--key", false
 * nothing. */
static int pair_args(opt_cmd *c, const char *path, yaml_document_t *doc, yaml_node_pair_t *p, args *a)
{
    yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
    if (!k || k->type != YAML_SCALAR_NODE) return fail(c->name, path, k, "a key that is not a name", NULL);
    a->cur = (int)k->start_mark.line + 1;
    const char *key = (const char *)k->data.scalar.value;
    char flag[80], near[64];
    snprintf(flag, sizeof flag, "--%s", key + strspn(key, "-"));
    opt *o = opt_find_long(c, flag + 2);
    if (!o) {
        const char *nb = opt_closest(c, flag, near, sizeof near);
        char msg[200];
        snprintf(msg, sizeof msg, "unknown option '%s'%s%s%s", key, nb ? "; did you mean " : "", nb ? nb + strspn(nb, "-") : "",
                 nb ? "?" : "");
        return fail(c->name, path, k, msg, NULL);
    }
    if (o->flags & (OPT_CONFIG | OPT_DUMP)) return fail(c->name, path, k, "not an option for a file: ", key);
    if (v->type == YAML_MAPPING_NODE) return fail(c->name, path, v, "a mapping where a value belongs: ", key);
    if (o->kind == OPTK_FLAG) {
        const char *s = v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : "";
        if (yaml_false(s)) return 0;
        if (!yaml_true(s)) return fail(c->name, path, v, "a switch takes true or false: ", key);
        if (push(a, flag)) return fail(c->name, path, k, "out of memory", NULL);
    } else if (v->type == YAML_SCALAR_NODE) {
        if (value_ok(c, path, v, key)) return -1;
        if (push(a, flag) || push(a, (const char *)v->data.scalar.value)) return fail(c->name, path, k, "out of memory", NULL);
    } else {
        if (v->data.sequence.items.start == v->data.sequence.items.top) return fail(c->name, path, v, "an empty list for ", key);
        /* a list: the values of an option that takes several (--valid-metrics bleu chrf); any other
         * option would keep only the last item */
        if (!(o->flags & OPT_MORE)) return fail(c->name, path, v, "a list for an option that takes one value: ", key);
        if (push(a, flag)) return fail(c->name, path, k, "out of memory", NULL);
        for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
            yaml_node_t *e = yaml_document_get_node(doc, *i);
            if (!e || e->type != YAML_SCALAR_NODE) return fail(c->name, path, e, "a list item that is not a value: ", key);
            if (value_ok(c, path, e, key)) return -1;
            /* a later item the option would not take would reach the command line's walk as a
             * stray argument, far from this file: refused here, with its line */
            const char *why = i > v->data.sequence.items.start ? o->fn(NULL, (const char *)e->data.scalar.value, (int)(i - v->data.sequence.items.start)) : NULL;
            if (why) {
                char msg[200];
                snprintf(msg, sizeof msg, "%.60s '%.60s': %s", key, (const char *)e->data.scalar.value, why);
                return fail(c->name, path, e, msg, NULL);
            }
            a->cur = (int)e->start_mark.line + 1; /* a value refused later names its own line */
            if (push(a, (const char *)e->data.scalar.value)) return fail(c->name, path, k, "out of memory", NULL);
        }
    }
    return 0;
}

/* libyaml's loader copies an aliased node once per alias (1 MB of file took 414 MB) and its
 * scanner slows quadratically with flow nesting (200,000 '[' took 99 s): a first pass over the
 * events refuses both, and a second document, before the loader runs. An option file is a
 * mapping of values and lists, two levels. 0, or -1 with the message printed; a syntax error is
 * left to the loader, which reports it. */
static int check_events(opt_cmd *c, const char *path, const unsigned char *text, size_t len)
{
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps)) return fail(c->name, path, NULL, "out of memory", NULL);
    yaml_parser_set_input_string(&ps, text, len);
    int depth = 0, docs = 0, rc = 0;
    for (yaml_event_t ev; rc == 0 && yaml_parser_parse(&ps, &ev);) {
        yaml_event_type_t t = ev.type;
        unsigned long line = (unsigned long)ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT) break;
        if (t == YAML_ALIAS_EVENT) rc = fail_line(c->name, path, line, "an alias (*name): option files take none");
        else if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1)
            rc = fail_line(c->name, path, line, "a second document (---): an option file holds one");
        else if ((t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) && ++depth > 2)
            rc = fail_line(c->name, path, line, "nested deeper than 'option: [values]'");
        else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) depth--;
    }
    yaml_parser_delete(&ps);
    return rc;
}

/* The whole file (a pipe too: -c <(...)), at most OPT_CONFIG_MAX_BYTES, into *text; 0 or -1. */
static int slurp(opt_cmd *c, const char *path, FILE *f, unsigned char **text, size_t *len)
{
    *text = malloc(OPT_CONFIG_MAX_BYTES + 1);
    if (!*text) return fail(c->name, path, NULL, "out of memory", NULL);
    *len = fread(*text, 1, OPT_CONFIG_MAX_BYTES + 1, f);
    if (ferror(f)) { perror(path); return fail_line(c->name, path, 0, "cannot read it"); }
    if (*len > OPT_CONFIG_MAX_BYTES) return fail_line(c->name, path, 0, "more than 1 MiB: not an option file");
    return 0;
}

/* The line of the parser's error: libyaml's reader (bytes that are not UTF-8, a control
 * character) sets only the byte offset of the problem, its mark staying at the start. */
static unsigned long problem_line(const yaml_parser_t *ps, const unsigned char *text, size_t len)
{
    if (ps->error != YAML_READER_ERROR) return (unsigned long)ps->problem_mark.line + 1;
    unsigned long line = 1;
    for (size_t i = 0; i < ps->problem_offset && i < len; i++) line += text[i] == '\n';
    return line;
}

/* A key given twice: the first of them, or NULL. */
static const yaml_node_t *repeated_key(yaml_document_t *doc, const yaml_node_pair_t *start, const yaml_node_pair_t *p)
{
    const yaml_node_t *k = yaml_document_get_node(doc, p->key);
    for (const yaml_node_pair_t *q = start; k && k->type == YAML_SCALAR_NODE && q < p; q++) {
        const yaml_node_t *e = yaml_document_get_node(doc, q->key);
        if (e && e->type == YAML_SCALAR_NODE && !strcmp((const char *)e->data.scalar.value, (const char *)k->data.scalar.value))
            return e;
    }
    return NULL;
}

int opt_config_read(opt_cmd *c, const char *path, char ***argv_out, int *argc_out, int **lines_out)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "nmt %s: error: %s: cannot open: ", c->name, path);
        perror(NULL);
        return -1;
    }
    yaml_parser_t ps;
    yaml_document_t doc;
    int rc = -1, loaded = 0;
    args a = {0};
    unsigned char *text = NULL;
    size_t len = 0;
    if (slurp(c, path, f, &text, &len) || check_events(c, path, text, len)) { free(text); fclose(f); return -1; }
    if (!yaml_parser_initialize(&ps)) { free(text); fclose(f); return fail(c->name, path, NULL, "out of memory", NULL); }
    yaml_parser_set_input_string(&ps, text, len);
    if (!yaml_parser_load(&ps, &doc)) {
        fprintf(stderr, "nmt %s: error: %s:%lu: not YAML: %s\n", c->name, path, problem_line(&ps, text, len),
                ps.problem ? ps.problem : "unreadable");
        goto done;
    }
    loaded = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (push(&a, "config")) { fail(c->name, path, NULL, "out of memory", NULL); goto done; } /* argv[0] */
    if (!root) { rc = 0; goto done; } /* an empty file: no options */
    if (root->type != YAML_MAPPING_NODE) { fail(c->name, path, root, "expected 'option: value' lines", NULL); goto done; }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        const yaml_node_t *first = repeated_key(&doc, root->data.mapping.pairs.start, p);
        if (first) {
            char msg[160];
            snprintf(msg, sizeof msg, "'%.80s' given twice (first at line %lu)", (const char *)first->data.scalar.value,
                     (unsigned long)first->start_mark.line + 1);
            fail(c->name, path, yaml_document_get_node(&doc, p->key), msg, NULL);
            goto done;
        }
        if (pair_args(c, path, &doc, p, &a)) goto done;
    }
    rc = 0;
done:
    if (loaded) yaml_document_delete(&doc);
    yaml_parser_delete(&ps);
    free(text);
    fclose(f);
    if (rc) { free(a.v); free(a.line); return rc; }
    *argv_out = a.v;
    *argc_out = a.n;
    *lines_out = a.line;
    return 0;
}
