/* opt_config.h: reading an option file (YAML, opt_config.c) into the arguments it stands for. */
#ifndef NMT_OPT_CONFIG_H
#define NMT_OPT_CONFIG_H

#include "opt.h"

/* The file at path as arguments for c's table: (*argv)[0] a placeholder, then "--key" and its
 * values; (*lines)[i] the file's line of argument i. Both arrays are the caller's to free, the
 * strings live as long as the program. 0, or -1 after printing the error (file:line). */
int opt_config_read(opt_cmd *c, const char *path, char ***argv, int *argc, int **lines);

/* The largest option file read: an option file is a few hundred bytes; more is not one. */
#define OPT_CONFIG_MAX_BYTES (1L << 20)

#endif
