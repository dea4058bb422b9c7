/* cmd.h: what the subcommands of the `nmt` program share: their entry points and small
 * option-parsing helpers that name the flag in every error. */
#ifndef NMT_CMD_H
#define NMT_CMD_H

#include <stdio.h>

#define NMT_VERSION_STRING "0.1.0"

/* Exit statuses: 0 success, 1 runtime error, 2 bad usage. */
enum { CMD_OK = 0, CMD_ERR = 1, CMD_USAGE = 2 };

/* The subcommands. */
int cmd_train(int argc, char **argv);
int cmd_vocab(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_lex(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_ibm(int argc, char **argv);
int cmd_aer(int argc, char **argv);
int cmd_bleu(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_detokenize(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Flushes and closes stdout with a check, so that a full disk or a closed pipe is reported. */
int cmd_finish(int rc);

/* Strict number parsing: the whole string, in range; on error prints
 * "nmt CMD: FLAG 'VALUE': not an integer" (or the range) and returns -1. */
int cmd_parse_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out);
int cmd_parse_double(const char *cmd, const char *flag, const char *s, double lo, double hi, double *out);

#endif
