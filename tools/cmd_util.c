/* cmd_util.c: option parsing and output checks shared by the subcommands. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int cmd_finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nmt: error writing standard output: %s\n", strerror(errno));
        return CMD_ERR;
    }
    return rc;
}

int cmd_parse_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno) {
        fprintf(stderr, "nmt %s: %s '%s': not an integer\n", cmd, flag, s ? s : "");
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(stderr, "nmt %s: %s %ld: out of range [%ld, %ld]\n", cmd, flag, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cmd_parse_double(const char *cmd, const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || *end || errno || v != v) {
        fprintf(stderr, "nmt %s: %s '%s': not a number\n", cmd, flag, s ? s : "");
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(stderr, "nmt %s: %s %g: out of range [%g, %g]\n", cmd, flag, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}
