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
    OPTK_DBL,    /* double in [lo, hi] (OPT_BELOW_HI: [lo, hi); OPT_ABOVE_LO: (lo, hi]) */
    OPTK_CHOICE, /* int: the index of the value in arg, "a|b|c" */
    OPTK_ENUM,   /* int: to_int(value), which is -1 for a name it does not know (the library's parsers) */
    OPTK_FN,     /* fn(dst, value, nth) stores it, or returns what was wrong */
    OPTK_OLD     /* an old spelling: warns and stands for the option named in help */
};

/* flags */
#define OPT_ONCE 1u     /* given twice is an error */
#define OPT_NONEMPTY 2u /* an empty value is an error */
#define OPT_FIRST 4u    /* applied before every other option, wherever it stands (presets) */
#define OPT_MORE 8u     /* OPTK_FN: the following arguments too, while fn accepts them (nth 1, 2 ...) */
#define OPT_BELOW_HI 16u
#define OPT_ABOVE_LO 256u
#define OPT_CONFIG 32u  /* OPTK_STR: a YAML file of options (opt_config.c), read before the command line */
#define OPT_DUMP 64u    /* OPTK_FLAG: print the effective options as YAML and stop (the caller checks it) */
#define OPT_IF_GIVEN 128u /* giving it at all does something (--subwords): dumped only when given */

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
    int (*to_int)(const char *val); /* OPTK_ENUM */
    const char *expect; /* OPTK_ENUM: the names it knows, for the error */
    const char *given[8]; /* set by opt_parse: the values of its last use, as written (for --dump-config;
                           * an option of more values than this dumps none) */
    int ngiven;
} opt;

/* Table entries; _Generic refuses a destination of the wrong type at compile time. */
#define OPT_HEAD(text) {.names = text, .kind = OPTK_HEAD}
#define OPT_FLAG(n, d, val, h) {.names = n, .kind = OPTK_FLAG, .dst = _Generic((d), int *: (d)), .lo = val, .help = h}
#define OPT_STR(n, d, a, h) {.names = n, .kind = OPTK_STR, .dst = _Generic((d), const char **: (d)), .arg = a, .help = h}
/* a string given at most once and not empty: a file name */
#define OPT_STR1(n, d, a, h) \
    {.names = n, .kind = OPTK_STR, .dst = _Generic((d), const char **: (d)), .arg = a, .help = h, .flags = OPT_ONCE | OPT_NONEMPTY}
#define OPT_INT(n, d, l, u, a, h) \
    {.names = n, .kind = OPTK_INT, .dst = _Generic((d), int *: (d)), .lo = l, .hi = u, .arg = a, .help = h}
#define OPT_LONG(n, d, l, u, a, h) \
    {.names = n, .kind = OPTK_LONG, .dst = _Generic((d), long *: (d)), .lo = l, .hi = u, .arg = a, .help = h}
#define OPT_DBL(n, d, l, u, a, h) \
    {.names = n, .kind = OPTK_DBL, .dst = _Generic((d), double *: (d)), .lo = l, .hi = u, .arg = a, .help = h}
#define OPT_CHOICE(n, d, values, h) {.names = n, .kind = OPTK_CHOICE, .dst = _Generic((d), int *: (d)), .arg = values, .help = h}
#define OPT_ENUM(n, d, f, a, known, h) \
    {.names = n, .kind = OPTK_ENUM, .dst = _Generic((d), int *: (d)), .arg = a, .help = h, .to_int = f, .expect = known}
#define OPT_FN(n, d, f, a, h) {.names = n, .kind = OPTK_FN, .dst = d, .arg = a, .help = h, .fn = f}
#define OPT_OLD(n, now) {.names = n, .kind = OPTK_OLD, .help = now}
#define OPT_END {.kind = OPTK_END}

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

/* The options in effect after opt_parse, as a YAML mapping that -c reads back to the same values:
 * every option with a value (defaults included; a string that is unset is left out) and every
 * flag that was given, under its long name without the dashes. A value that is not UTF-8 cannot
 * be held: a comment stands in its place and lost gets the option's name (else ""). The caller
 * frees the text; NULL when out of memory. */
char *opt_dump(const opt_cmd *c, char *lost, size_t size_lost);

/* opt_names.c: lookups by spelling. */
/* Does one of o's space-separated spellings equal s[0..len)? */
int opt_has_name(const opt *o, const char *s, size_t len);
/* The entry of table t (up to OPTK_END) one of whose spellings is s[0..len), or NULL; an old
 * spelling's entry (OPTK_OLD) is returned as it is. */
opt *opt_lookup(opt *t, const char *s, size_t len);
/* The option whose long spelling is "--" + key, or NULL (opt_config.c's check of a file's keys). */
opt *opt_find_long(opt_cmd *c, const char *key);
/* The closest long spelling to key, for "did you mean" (NULL when none is close). */
const char *opt_closest(const opt_cmd *c, const char *key, char *buf, size_t size);

#endif
