/* opt.h: the one option parser of the nmt program. Each subcommand describes its options in a
 * table (spellings, value kind and range, destination, help text); opt_parse reads argv against
 * it and writes the errors, and opt_help prints --help from the same table, so the two agree. */
#ifndef NMT_OPT_H
#define NMT_OPT_H

#include <stdio.h>

enum opt_kind {
    OPTK_END,    /* ends a table */
    OPTK_HEAD,   /* no option: a heading line in --help (names holds its text) */
    OPTK_FLAG,   /* no value: stores (int)lo into *dst (and *dst2) */
    OPTK_STR,    /* const char *: the value itself */
    OPTK_INT,    /* int in [lo, hi] */
    OPTK_LONG,   /* long in [lo, hi] */
    OPTK_DBL,    /* double in [lo, hi] (OPT_BELOW_HI: [lo, hi)) */
    OPTK_CHOICE, /* int: the index of the value in arg, "a|b|c" */
    OPTK_FN,     /* fn(dst, value, nth) stores it, or returns what was wrong */
    OPTK_OLD     /* an old spelling: warns and stands for the option named in help */
};

/* flags */
#define OPT_ONCE 1u     /* given twice is an error */
#define OPT_NONEMPTY 2u /* an empty value is an error */
#define OPT_FIRST 4u    /* applied before every other option, wherever it stands (presets) */
#define OPT_MORE 8u     /* OPTK_FN: the following arguments too, while fn accepts them (nth 1, 2 ...) */
#define OPT_BELOW_HI 16u

typedef struct opt {
    const char *names; /* spellings, space-separated ("-w --width"); messages use the first "--" one */
    int kind;
    void *dst;
    double lo, hi;     /* numbers: the range; OPTK_FLAG: lo is the value stored */
    const char *arg;   /* the value's name in --help ("N", "FILE"); OPTK_CHOICE: "a|b|c" */
    const char *help;  /* "{}" shows the default (*dst before parsing), "{lo}" "{hi}" the range;
                        * OPTK_OLD: the new name */
    /* OPTK_FN: stores val and returns NULL, or returns what is wrong with it. With OPT_MORE it
     * is first asked with dst NULL whether it would take a following argument (nth >= 1). */
    const char *(*fn)(void *dst, const char *val, int nth);
    void *dst2;        /* OPTK_FLAG, OPTK_INT: a second place for the same value */
    unsigned flags;
    int seen;          /* set by opt_parse: how many times it was given */
} opt;

/* Table entries; _Generic refuses a destination of the wrong type at compile time. */
#define OPT_HEAD(text) {text, OPTK_HEAD, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0}
#define OPT_FLAG(n, d, val, help) {n, OPTK_FLAG, _Generic((d), int *: (d)), val, 0, NULL, help, NULL, NULL, 0, 0}
#define OPT_STR(n, d, arg, help) {n, OPTK_STR, _Generic((d), const char **: (d)), 0, 0, arg, help, NULL, NULL, 0, 0}
/* a string given at most once and not empty: a file name */
#define OPT_STR1(n, d, arg, help) {n, OPTK_STR, _Generic((d), const char **: (d)), 0, 0, arg, help, NULL, NULL, OPT_ONCE | OPT_NONEMPTY, 0}
#define OPT_INT(n, d, lo, hi, arg, help) {n, OPTK_INT, _Generic((d), int *: (d)), lo, hi, arg, help, NULL, NULL, 0, 0}
#define OPT_LONG(n, d, lo, hi, arg, help) {n, OPTK_LONG, _Generic((d), long *: (d)), lo, hi, arg, help, NULL, NULL, 0, 0}
#define OPT_DBL(n, d, lo, hi, arg, help) {n, OPTK_DBL, _Generic((d), double *: (d)), lo, hi, arg, help, NULL, NULL, 0, 0}
#define OPT_CHOICE(n, d, values, help) {n, OPTK_CHOICE, _Generic((d), int *: (d)), 0, 0, values, help, NULL, NULL, 0, 0}
#define OPT_FN(n, d, f, arg, help) {n, OPTK_FN, d, 0, 0, arg, help, f, NULL, 0, 0}
#define OPT_OLD(n, now) {n, OPTK_OLD, NULL, 0, 0, NULL, now, NULL, NULL, 0, 0}
#define OPT_END {NULL, OPTK_END, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0}

/* A subcommand: its name for messages, the text --help prints before and after the table. */
typedef struct opt_cmd {
    const char *name;   /* "train": messages read "nmt train: ..." */
    const char *usage;  /* the Usage line and what the command does, ending in a newline */
    const char *after;  /* printed after the options, or NULL */
    opt *opts;
    int max_args;       /* positional arguments allowed */
    const char *args_hint; /* said with "unexpected argument", or NULL */
} opt_cmd;

/* An upper bound for "no limit" on OPTK_LONG: clamped to LONG_MAX, which a double cannot hold. */
#define OPT_LONG_MAX 1e19

/* opt_parse's "go on": any other return value is the exit status (0 after --help). */
#define OPT_GO (-1)

/* Parses argv[1..argc): options into their destinations, the positional arguments into
 * args[0..*nargs) (room for c->max_args; NULL when that is 0). "--" ends the options; "-" is an argument. -h and --help print
 * the help on stdout. Errors and deprecation warnings go to stderr, naming the option. */
int opt_parse(opt_cmd *c, int argc, char **argv, char **args, int *nargs);

/* The help text: usage, the table, the old spellings, the closing text. */
void opt_help(FILE *f, const opt_cmd *c);

/* How many times the option of that spelling was given (0 for none or an unknown name). */
int opt_given(const opt_cmd *c, const char *name);

#endif
