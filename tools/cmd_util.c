/* cmd_util.c: what the subcommands share beside option parsing (opt.c): the checked end of
 * standard output and the library's log lines on stderr. */
#include <errno.h>
#include <string.h>

#include "cmd.h"
#include "eval/bleu.h"

int cmd_finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nmt: error writing standard output: %s\n", strerror(errno));
        return CMD_ERR;
    }
    return rc;
}

void cmd_log(char level, const char *msg, void *user)
{
    const char *cmd = user;
    fprintf(stderr, "nmt %s: %s%s\n", cmd, level == 'E' ? "error: " : level == 'W' ? "warning: " : "", msg);
}

const char *cmd_parse_bleu_tok(void *dst, const char *val, int nth)
{
    (void)nth;
    return bleu_tokenize_parse(val, dst) ? "expected 13a, intl or none" : NULL;
}

int cmd_one_model(const char *cmd, int given)
{
    if (given <= 1) return CMD_OK;
    fprintf(stderr, "nmt %s: error: --model given %d times: nmt %s uses one model only (ensembles: nmt translate, nmt score)\n",
            cmd, given, cmd);
    return CMD_USAGE;
}
