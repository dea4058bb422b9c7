/* cmd_tokenize.c: `nmt tokenize` and `nmt detokenize`, stdin to stdout one line at a time, with
 * the output of Moses' tokenizer.perl / detokenizer.perl (src/text/tokenize.h). Lines are flushed as
 * they are written when stdout is a pipe or terminal, so the commands can sit in a pipeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "opt.h"
#include "text/tokenize.h"

#define MAX_UTF8_WARNINGS 10

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

/* The options of both commands; detok limits them to -l and -q. Returns OPT_GO to run, else
 * the exit status. */
static int parse(int argc, char **argv, int detok, tok_opts *o)
{
    *o = tok_opts_default();
    int quiet = 0;
    opt tok[] = {
        OPT_ENUM("-l --lang", &o->lang, tok_lang_parse, "LANG", "en, fr or de", "language rules: en (default), fr, de"),
        OPT_FLAG("-a --aggressive", &o->aggressive, 1, "aggressive hyphen splitting: dirt-bikes -> dirt @-@ bikes"),
        OPT_FLAG("--no-escape -no-escape", &o->escape, 0, "do not HTML-escape & | < > ' \" [ ] (tokenizer.perl -no-escape)"),
        OPT_FLAG("--lowercase", &o->lowercase, 1, "lowercase first (lowercase.perl)"),
        OPT_FLAG("--normalize-punct", &o->normalize, 1, "normalize punctuation first (normalize-punctuation.perl -l LANG);\n"
                 "--lowercase --normalize-punct gives Multi30k's .lc.norm.tok files"),
        OPT_FLAG("-q", &quiet, 1, "accepted for compatibility (nmt prints no banner)"),
        OPT_OLD("--normalize", "--normalize-punct"),
        OPT_END,
    };
    opt detok_t[] = {
        OPT_ENUM("-l --lang", &o->lang, tok_lang_parse, "LANG", "en, fr or de", "language rules: en (default), fr, de (de uses the generic rules)"),
        OPT_FLAG("-q", &quiet, 1, "accepted for compatibility (nmt prints no banner)"),
        OPT_END,
    };
    opt_cmd tc = {"tokenize", "Usage: nmt tokenize [-l en|fr|de] [-a] [--no-escape] [--lowercase] [--normalize-punct] < in > out\n"
                  "Tokenizes each line of standard input like Moses' tokenizer.perl.\n\n",
                  "\nInvalid UTF-8 is replaced by U+FFFD, with a warning naming the line.\n", tok, 0, NULL};
    opt_cmd dc = {"detokenize", "Usage: nmt detokenize [-l en|fr|de] < in > out\n"
                  "Detokenizes each line of standard input like Moses' detokenizer.perl: joins @-@,\n"
                  "un-escapes HTML entities and re-attaches punctuation, quotes and clitics.\n\n", NULL, detok_t, 0, NULL};
    int nargs;
    return opt_parse(detok ? &dc : &tc, argc, argv, NULL, &nargs);
}

int cmd_tokenize(int argc, char **argv)
{
    tok_opts o;
    int rc = parse(argc, argv, 0, &o);
    return rc != OPT_GO ? rc : run(argv[0], &o, 0);
}

int cmd_detokenize(int argc, char **argv)
{
    tok_opts o;
    int rc = parse(argc, argv, 1, &o);
    return rc != OPT_GO ? rc : run(argv[0], &o, 1);
}
