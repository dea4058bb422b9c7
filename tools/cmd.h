/* cmd.h: what the subcommands of the `nmt` program share: their entry points, exit statuses,
 * the checked end of standard output and the log callback (options: opt.h). */
#ifndef NMT_CMD_H
#define NMT_CMD_H

#include <stdio.h>

#include "base/paths.h"
#include "nmt.h"

#define NMT_VERSION_STRING "0.4.0"

/* Exit statuses: 0 success, 1 runtime error, 2 bad usage. */
enum { CMD_OK = 0, CMD_ERR = 1, CMD_USAGE = 2 };

/* The subcommands. */
int cmd_train(int argc, char **argv);
int cmd_vocab(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_lex(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_ibm(int argc, char **argv);
/* `nmt ibm --src src --tgt tgt --sym gdfa` written to path (through path.tmp, renamed when
 * whole): what `nmt train --guided-alignment ibm` trains towards. */
int cmd_ibm_links(const char *src, const char *tgt, const char *path, struct nmt_err *err);
int cmd_aer(int argc, char **argv);
int cmd_bleu(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_detokenize(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_segment(int argc, char **argv);
int cmd_blas_kernels(int argc, char **argv);
/* blas_kernels.c: at start-up, before any product, restarts the program once with the OpenBLAS
 * kernels it should run, or sets NMT_GEMM=onednn (the fastest timed on this CPU model, cached),
 * unless OPENBLAS_CORETYPE or NMT_GEMM is set. Returns 0 when no restart is needed or it failed;
 * -1 (said on stderr) when NMT_GEMM names no kernel. */
int blas_kernels_choose(char **argv);
/* The user's OPENBLAS_CORETYPE when it keeps OpenBLAS below the AVX-512 kernels of an AVX-512 CPU
 * (on this project's machine such a pin made training 1.63x slower: docs/results/speed.md,
 * "FP32 kernels"), else NULL; NULL too under NMT_BLAS_AUTOTUNE=0, which asks nmt to leave the kernels
 * alone. */
const char *blas_kernels_user_pin(void);

/* Flushes and closes stdout with a check, so that a full disk or a closed pipe is reported. */
int cmd_finish(int rc);
/* -o FILE: standard output made FILE (created or emptied; cmd_finish checks its end), unless FILE
 * is one of in[0..nin), every file the command reads ("-": the file behind standard input):
 * refused by path_check_outputs, the rule of every command that writes, before anything is
 * emptied (CMD_USAGE). The exit status, after saying why on failure. */
int cmd_output_to(const char *cmd, const char *path, const path_role *in, int nin);
/* paths[0..n) as inputs named "a model", into in; n */
int cmd_model_roles(path_role *in, const char *const *paths, int n);
#define CMD_OUTPUT_OPT(d) OPT_STR("-o --output", d, "FILE", "write to FILE instead of standard output")
/* "H:MM:SS" of s seconds ("?" when negative) */
void cmd_hms(char *buf, size_t n, double s);

/* The progress line of translate, score and align, on stderr when it is a terminal or --progress
 * is given: sentences done, sentences/s and time, redrawn at most 4 times a second on a terminal,
 * a line every 10 s elsewhere, and a last line with the totals at the end. */
typedef struct cmd_progress {
    const char *cmd;
    int on, tty, open; /* open: a terminal line to end before the last */
    long n;
    double t0, last;
} cmd_progress;
void cmd_progress_start(cmd_progress *p, const char *cmd, int asked);
void cmd_progress_add(cmd_progress *p, long n);
void cmd_progress_end(cmd_progress *p);
#define CMD_PROGRESS_OPT(d) OPT_FLAG("--progress", d, 1, "sentences done and sentences/s on stderr (shown anyway when stderr\n" \
                                     "is a terminal)")

/* The library's log callback (nmt_set_log), user the command's name: "nmt CMD: warning: MSG"
 * for 'W', "nmt CMD: error: MSG" for 'E', "nmt CMD: MSG" for 'M', on stderr. */
void cmd_log(char level, const char *msg, void *user);

/* cmd_words.c. The line s through tp: *line the tokens the model reads (space-separated), *map
 * each token's word, and if words is not NULL *words the words a user reads (space-separated);
 * all malloc'ed (the caller frees them, and map->word_of, on failure too). */
int cmd_encode_line(nmt_text *tp, const char *s, char **line, nmt_word_map *map, char **words, nmt_err *err);
/* a's attention (over tokens) as *w over words: rows the target's words and its EOS, columns the
 * source words whose tokens the model read and the EOS; the weights in *buf (grown, *cap). */
int cmd_alignment_words(const nmt_alignment *a, const nmt_word_map *src, const nmt_word_map *tgt, nmt_alignment *w,
                        float **buf, size_t *cap, nmt_err *err);

/* CMD_OK, or CMD_USAGE after saying so when --model was given more than once to a command that
 * takes one model (only nmt translate and nmt score decode with an ensemble). */
int cmd_one_model(const char *cmd, int given);
/* Both corpora replaced, line by line, by what the model reads: through its text stages (a
 * subword model's, or a raw-text word model's); tokenized text is left as it is for the others. */
typedef struct textfile textfile;
int cmd_model_lines(const nmt_model *m, textfile *S, textfile *T, nmt_err *err);

/* A BLEU tokenizer (13a, intl, none) into an enum bleu_tokenize, for option tables (opt.h). */
const char *cmd_parse_bleu_tok(void *dst, const char *val, int nth);

/* --shortlist FILE[,K[,F]] of nmt translate and nmt serve (nmt_shortlist_load's K and F, Marian's
 * 100 and 100 unless given); path[0] == 0 when the option is absent. */
typedef struct cmd_shortlist {
    char path[4096];
    int k, f;
} cmd_shortlist;
const char *cmd_parse_shortlist(void *dst, const char *val, int nth);
/* --device NAME: makes it the process's device at once (nmt_set_device); the error names the
 * devices this build has */
const char *cmd_parse_device(void *dst, const char *val, int nth);
#define CMD_DEVICE_OPT \
    OPT_FN("--device", NULL, cmd_parse_device, "NAME", "cpu (default; or NMT_DEVICE) | devsim (the CPU's kernels on memory\n" \
           "the host cannot touch, every kernel argument checked: for tests) |\n"                    \
           "cuda or cuda:N (GPU N, where nmt was built with CUDA: docs/CUDA.md)")
#define CMD_SHORTLIST_HELP "per batch, compute the output layer (and its softmax) only over\n" \
    "the K best translations of the batch's source words in FILE (from\n"                      \
    "'nmt lex --top K'), the F most frequent target words, EOS and UNK\n"                      \
    "(default K = F = 100)"
/* --batch-invariant off|on into an int (0, 1), nmt_translate_opts.batch_invariant */
#define CMD_BATCH_INVARIANT_OPT(dst) \
    OPT_CHOICE("--batch-invariant", (dst), "off|on", "on (default): a sentence's output (words, scores, attention) is the\n" \
               "same to the bit in any batch, batch size and thread count; off: the\n"                       \
               "BLAS's products, faster on AVX-512 CPUs, whose last bits depend on\n"                        \
               "the batch (docs/CLI.md)")
#define CMD_PRECISION_HELP "the decoder's matrix products: fp32 (default, the reference), or\n" \
    "the weights converted once to int8 (AVX2) or bf16 (AVX512_BF16);\n"                       \
    "refused where the CPU lacks the instructions"

#endif
