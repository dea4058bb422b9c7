/* cmd_tokenize.c: `nmt tokenize` and `nmt detokenize`, stdin to stdout one line at a time, with
 * the output of Moses' tokenizer.perl / detokenizer.perl (src/text/tokenize.h). Lines are flushed as
 * they are written when stdout is a pipe or terminal, so the commands can sit in a pipeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "text/tokenize.h"

#define MAX_UTF8_WARNINGS 10

static void usage_tokenize(FILE *f)
{
    fprintf(f,
            "Usage: nmt tokenize [-l en|fr|de] [-a] [--no-escape] [--lowercase] [--normalize] < in > out\n"
            "Tokenizes each line of standard input like Moses' tokenizer.perl.\n\n"
            "  -l LANG        language rules: en (default), fr, de\n"
            "  -a             aggressive hyphen splitting: dirt-bikes -> dirt @-@ bikes\n"
            "  --no-escape    do not HTML-escape & | < > ' \" [ ] (tokenizer.perl -no-escape)\n"
            "  --lowercase    lowercase first (lowercase.perl)\n"
            "  --normalize    normalize punctuation first (normalize-punctuation.perl -l LANG);\n"
            "                 --lowercase --normalize gives Multi30k's .lc.norm.tok files\n"
            "  -q             accepted for compatibility (nmt prints no banner)\n"
            "  -h, --help     this help\n\n"
            "Invalid UTF-8 is replaced by U+FFFD, with a warning naming the line.\n");
}

static void usage_detokenize(FILE *f)
{
    fprintf(f,
            "Usage: nmt detokenize [-l en|fr|de] < in > out\n"
            "Detokenizes each line of standard input like Moses' detokenizer.perl: joins @-@,\n"
            "un-escapes HTML entities and re-attaches punctuation, quotes and clitics.\n\n"
            "  -l LANG        language rules: en (default), fr, de (de uses the generic rules)\n"
            "  -q             accepted for compatibility (nmt prints no banner)\n"
            "  -h, --help     this help\n");
}

/* Reads stdin line by line through tok_line or detok_line (detok != 0). */
static int run(const char *cmd, const tok_opts *o, int detok)
{
    struct stat st;
    int flush_lines = !(fstat(fileno(stdout), &st) == 0 && S_ISREG(st.st_mode));
    tok_buf b;
    tok_buf_init(&b);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0, bad_lines = 0;
    int rc = CMD_OK;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        nmt_err err = {0};
        int r = detok ? detok_line(o->lang, line, (size_t)n, &b, &err)
                      : tok_line(o, line, (size_t)n, &b, &err);
        if (r != NMT_OK) {
            fprintf(stderr, "nmt %s: error: stdin:%ld: %s\n", cmd, lineno, err.msg);
            rc = CMD_ERR;
            break;
        }
        if (b.n_invalid) {
            if (bad_lines < MAX_UTF8_WARNINGS)
                fprintf(stderr, "nmt %s: warning: stdin:%ld: invalid UTF-8 (%zu sequence%s replaced by U+FFFD)\n",
                        cmd, lineno, b.n_invalid, b.n_invalid == 1 ? "" : "s");
            bad_lines++;
        }
        if (fwrite(b.s, 1, b.len, stdout) != b.len || putchar('\n') == EOF) {
            rc = CMD_ERR; /* reported by cmd_finish */
            break;
        }
        if (flush_lines && fflush(stdout) != 0) { rc = CMD_ERR; break; }
    }
    if (rc == CMD_OK && ferror(stdin)) {
        fprintf(stderr, "nmt %s: error: reading standard input failed\n", cmd);
        rc = CMD_ERR;
    }
    if (bad_lines > MAX_UTF8_WARNINGS)
        fprintf(stderr, "nmt %s: warning: %ld lines in all had invalid UTF-8\n", cmd, bad_lines);
    free(line);
    tok_buf_free(&b);
    return rc;
}

/* Shared option loop; detok limits the flags to -l and -q. Returns -1 to run, else an exit code. */
static int parse(int argc, char **argv, int detok, tok_opts *o)
{
    const char *cmd = argv[0];
    *o = tok_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (detok) usage_detokenize(stdout);
            else usage_tokenize(stdout);
            return CMD_OK;
        } else if (!strcmp(a, "-l") || !strcmp(a, "--lang")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "nmt %s: %s needs a language (en, fr or de)\n", cmd, a);
                return CMD_USAGE;
            }
            o->lang = tok_lang_parse(argv[++i]);
            if (o->lang < 0) {
                fprintf(stderr, "nmt %s: %s '%s': unsupported language (en, fr or de)\n", cmd, a, argv[i]);
                return CMD_USAGE;
            }
        } else if (!strcmp(a, "-q")) {
            /* tokenizer.perl -q only silences its banner */
        } else if (!detok && (!strcmp(a, "-a") || !strcmp(a, "--aggressive"))) {
            o->aggressive = 1;
        } else if (!detok && (!strcmp(a, "--no-escape") || !strcmp(a, "-no-escape"))) {
            o->escape = 0;
        } else if (!detok && !strcmp(a, "--lowercase")) {
            o->lowercase = 1;
        } else if (!detok && (!strcmp(a, "--normalize") || !strcmp(a, "--normalize-punct"))) {
            o->normalize = 1;
        } else {
            fprintf(stderr, "nmt %s: unknown option '%s' (nmt %s --help lists them)\n", cmd, a, cmd);
            return CMD_USAGE;
        }
    }
    return -1;
}

int cmd_tokenize(int argc, char **argv)
{
    tok_opts o;
    int rc = parse(argc, argv, 0, &o);
    return rc >= 0 ? rc : run(argv[0], &o, 0);
}

int cmd_detokenize(int argc, char **argv)
{
    tok_opts o;
    int rc = parse(argc, argv, 1, &o);
    return rc >= 0 ? rc : run(argv[0], &o, 1);
}
