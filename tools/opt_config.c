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
        if (push(a, flag) || push(a, (const char *)v->data.scalar.value)) return fail(c->name, path, k, "out of memory", NULL);
    } else {
        /* a list: one option with several values, or the option given once per item */
        for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
            yaml_node_t *e = yaml_document_get_node(doc, *i);
            if (!e || e->type != YAML_SCALAR_NODE) return fail(c->name, path, e, "a list item that is not a value: ", key);
            if ((i == v->data.sequence.items.start || !(o->flags & OPT_MORE)) && push(a, flag))
                return fail(c->name, path, k, "out of memory", NULL);
            if (push(a, (const char *)e->data.scalar.value)) return fail(c->name, path, k, "out of memory", NULL);
        }
    }
    return 0;
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
    if (!yaml_parser_initialize(&ps)) { fclose(f); return fail(c->name, path, NULL, "out of memory", NULL); }
    yaml_parser_set_input_file(&ps, f);
    if (!yaml_parser_load(&ps, &doc)) {
        fprintf(stderr, "nmt %s: error: %s:%lu: not YAML: %s\n", c->name, path, (unsigned long)ps.problem_mark.line + 1,
                ps.problem ? ps.problem : "unreadable");
        goto done;
    }
    loaded = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (push(&a, "config")) { fail(c->name, path, NULL, "out of memory", NULL); goto done; } /* argv[0] */
    if (!root) { rc = 0; goto done; } /* an empty file: no options */
    if (root->type != YAML_MAPPING_NODE) { fail(c->name, path, root, "expected 'option: value' lines", NULL); goto done; }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++)
        if (pair_args(c, path, &doc, p, &a)) goto done;
    rc = 0;
done:
    if (loaded) yaml_document_delete(&doc);
    yaml_parser_delete(&ps);
    fclose(f);
    if (rc) { free(a.v); free(a.line); return rc; }
    *argv_out = a.v;
    *argc_out = a.n;
    *lines_out = a.line;
    return 0;
}
