/* cmd_train.c: `nmt train` and `nmt vocab`: option parsing, the live progress line, and
 * signal handling (SIGINT/SIGTERM ask the library to checkpoint and stop). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "data/corpus.h"
#include "nmt.h"
#include "train/optim.h"
#include "text/tokenize.h"

static volatile int stop_flag;

static void on_signal(int sig)
{
    stop_flag = 1;
    signal(sig, SIG_DFL); /* a second signal ends the program at once */
}

static void usage_train(FILE *f, const nmt_train_opts *d)
{
    fprintf(f,
            "Usage: nmt train --src FILE --tgt FILE --model FILE [options]\n"
            "Trains an RNNsearch or RNNencdec model (Bahdanau et al. 2014, Appendix B) on a tokenized parallel\n"
            "corpus (one sentence per line, tokens separated by spaces, UTF-8).\n\n"
            "Data:\n"
            "  --src FILE, --tgt FILE     training corpus\n"
            "  --valid-src F, --valid-tgt F  dev set: dev NLL and perplexity, best model, early stopping\n"
            "  --model FILE               where the best model (by dev NLL) is written\n"
            "  --checkpoint FILE          latest training state (default MODEL.ckpt)\n"
            "  --resume FILE              continue from a checkpoint (same corpus; its architecture,\n"
            "                             vocabularies, optimizer, learning rate, dropout and batching are\n"
            "                             kept; the stopping limits are the ones given now)\n"
            "  --log FILE                 TSV log of validations (default MODEL.log.tsv)\n"
            "  --batch-log FILE           each update's pairs as corpus line numbers, one line per update\n"
            "  --tokenize SRC,TGT         the files are raw text: Moses-tokenize them (e.g. en,fr)\n"
            "  --lowercase, --normalize-punct  with --tokenize: lowercase / normalize punctuation first\n"
            "                             (both: the Multi30k preprocessing; translate with the same flags)\n"
            "  --preset NAME              paper (Appendix B; the defaults below) | hour (the best dev perplexity\n"
            "                             found for an hour on 2 cores: emb/hid/att/maxout 256, vocab 10000,\n"
            "                             Adam lr 0.002, dropout 0.5, lr-decay 0.5, patience 4, max-time 1h);\n"
            "                             options given beside it override its values\n"
            "Model:\n"
            "  --arch NAME                rnnsearch | rnnenc (Bahdanau et al.) | recatt | inputfeed | markov | locfer |\n"
            "                             fertdec | recatt+fertdec (Feng et al. 2016; default %s)\n"
            "  --window K                 Markov / LocFer window half-width (default %d)\n"
            "  --fert-step-weight X, --fert-left-weight X  FertDec's step-decay and left-over cost weights (1, 1)\n"
            "  --vocab K                  shortlist per side, counting EOS and UNK (default %d)\n"
            "  --src-vocab K, --tgt-vocab K\n"
            "  --emb N (%d)  --hid N (%d)  --att N (%d)  --maxout N (%d)\n"
            "Training:\n"
            "  --max-len N                skip pairs with a side over N words (default %d; 0 = none)\n"
            "  --batch N (%d)  --sort-blocks K (%d: blocks of K*N pairs sorted by length; K*N at most 2^31-1)\n"
            "  --reshuffle                reshuffle every epoch (default: shuffle once, as the paper)\n"
            "  --optimizer NAME           adadelta | adagrad | adam | sgd (default adadelta)\n"
            "  --lr X                     learning rate (default: 1 adadelta, 0.01 adagrad, 0.001 adam)\n"
            "  --clip X                   rescale the gradient to this L2 norm when larger (default %g)\n"
            "  --dropout P                dropout on the maxout output (default 0; Feng et al. use 0.5)\n"
            "  --lr-decay F               multiply the learning rate by F after each validation that does\n"
            "                             not improve the dev NLL (default 0: never)\n"
            "  --seed N (%llu)  --threads N (default: all cores)\n"
            "Stopping and saving:\n"
            "  --max-updates N  --max-epochs N  --max-time T   (T in seconds, or with s/m/h/d)\n"
            "  --valid-every N            validate every N updates (default 0: every epoch)\n"
            "  --save-every N             checkpoint every N updates (default %ld; also at validations)\n"
            "  --patience P               stop after P validations without improvement (default %d; 0 = never)\n"
            "  --log-every N              progress lines every N updates when stderr is not a terminal (100)\n",
            nmt_arch_name(d->cfg.arch), d->cfg.window, d->cfg.src_vocab, d->cfg.emb, d->cfg.hid, d->cfg.att, d->cfg.maxout,
            d->max_len, d->batch, d->sort_blocks, d->clip, (unsigned long long)d->seed, d->save_every, d->patience);
}

static void hms(char *buf, size_t n, double s)
{
    if (s < 0) { snprintf(buf, n, "?"); return; }
    long t = (long)(s + 0.5);
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

struct view { int tty; long log_every, last; int line_open; double lr; };

static void on_report(const nmt_train_report *r, void *user)
{
    struct view *v = user;
    char el[32], eta[32];
    hms(el, sizeof el, r->elapsed);
    hms(eta, sizeof eta, r->eta);
    if (r->kind == NMT_REPORT_PROGRESS) {
        if (!v->tty && r->update - v->last < v->log_every) return;
        v->last = r->update;
        fprintf(stderr, "%supdate %ld | epoch %d %5.1f%% | cost %.3f | gnorm %.2f | %.0f tok/s | %s elapsed | ETA %s%s",
                v->tty ? "\r\033[K" : "[train] ", r->update, r->epoch, 100 * r->epoch_frac, r->cost, r->grad_norm,
                r->tok_per_s, el, eta, v->tty ? "" : "\n");
        v->line_open = v->tty;
        return;
    }
    if (v->line_open) { fputc('\n', stderr); v->line_open = 0; }
    switch (r->kind) {
    case NMT_REPORT_START: fprintf(stderr, "[train] %s\n", r->msg); break;
    case NMT_REPORT_VALID:
        if (r->dev_ppl == 0) { /* no dev set: nothing was measured */
            fprintf(stderr, "[valid] update %ld epoch %d: no dev set (--valid-src/--valid-tgt); the model is saved at the end\n",
                    r->update, r->epoch);
            break;
        }
        fprintf(stderr, "[valid] update %ld epoch %d: dev NLL %.4f per sentence, %.4f per token, perplexity %.3f%s\n",
                r->update, r->epoch, r->dev_nll, r->dev_nll_tok, r->dev_ppl,
                r->improved ? " (best so far, saved)" : "");
        if (v->lr > 0 && r->lr != v->lr) fprintf(stderr, "[valid] learning rate lowered to %g\n", r->lr);
        v->lr = r->lr;
        break;
    case NMT_REPORT_SAVE: fprintf(stderr, "[train] checkpoint %s at update %ld\n", r->msg, r->update); break;
    case NMT_REPORT_WARN: fprintf(stderr, "[W::train] %s\n", r->msg); break;
    case NMT_REPORT_END: fprintf(stderr, "[train] %s after %ld updates, %s\n", r->msg, r->update, el); break;
    }
    fflush(stderr);
}

/* --max-time: seconds, or a number with s, m, h or d. */
static int parse_time(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    double mul = !*end ? 1 : !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : -1;
    if (end == s || mul < 0 || !(v >= 0)) {
        fprintf(stderr, "nmt train: --max-time '%s': expected seconds or a number with s, m, h or d\n", s);
        return -1;
    }
    *out = v * mul;
    return 0;
}

int cmd_train(int argc, char **argv)
{
    nmt_train_opts o = nmt_train_default_opts(), d = o;
    long log_every = 100, v;
    double x;
    /* a preset first, wherever it stands, so that the options given beside it override it */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--preset")) {
            nmt_err e;
            if (nmt_train_preset(&o, argv[i + 1], &e)) { fprintf(stderr, "nmt train: --preset: %s\n", e.msg); return CMD_USAGE; }
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage_train(stdout, &d); return CMD_OK; }
        if (!strcmp(a, "--reshuffle")) { o.reshuffle = 1; continue; }
        if (!strcmp(a, "--lowercase")) { o.tok_lowercase = 1; continue; }
        /* --normalize-punct as in translate, where --normalize means length normalisation */
        if (!strcmp(a, "--normalize-punct") || !strcmp(a, "--normalize")) { o.tok_normalize = 1; continue; }
        if (strncmp(a, "--", 2)) { fprintf(stderr, "nmt train: unexpected argument '%s' (nmt train --help)\n", a); return CMD_USAGE; }
        if (i + 1 >= argc) { fprintf(stderr, "nmt train: %s needs a value\n", a); return CMD_USAGE; }
        const char *val = argv[++i];
#define LONGOPT(name, lo, hi, dst) else if (!strcmp(a, name)) { if (cmd_parse_long("train", name, val, lo, hi, &v)) return CMD_USAGE; dst = v; }
#define DBLOPT(name, lo, hi, dst) else if (!strcmp(a, name)) { if (cmd_parse_double("train", name, val, lo, hi, &x)) return CMD_USAGE; dst = x; }
        if (!strcmp(a, "--src")) o.src = val;
        else if (!strcmp(a, "--tgt")) o.tgt = val;
        else if (!strcmp(a, "--valid-src")) o.valid_src = val;
        else if (!strcmp(a, "--valid-tgt")) o.valid_tgt = val;
        else if (!strcmp(a, "--model")) o.model = val;
        else if (!strcmp(a, "--checkpoint")) o.checkpoint = val;
        else if (!strcmp(a, "--resume")) o.resume = val;
        else if (!strcmp(a, "--log")) o.log_tsv = val;
        else if (!strcmp(a, "--batch-log")) o.batch_log = val;
        else if (!strcmp(a, "--preset")) continue; /* applied above */
        else if (!strcmp(a, "--arch")) {
            if ((o.cfg.arch = nmt_arch_parse(val)) < 0) {
                fprintf(stderr, "nmt train: --arch '%s': expected rnnsearch, rnnenc, recatt, inputfeed, markov, locfer, fertdec or recatt+fertdec\n", val);
                return CMD_USAGE;
            }
        } else if (!strcmp(a, "--optimizer")) {
            if ((o.optimizer = optim_parse(val)) < 0) { fprintf(stderr, "nmt train: --optimizer '%s': expected adadelta, adagrad, adam or sgd\n", val); return CMD_USAGE; }
        } else if (!strcmp(a, "--tokenize")) {
            char l1[8] = "", l2[8] = "";
            const char *comma = strchr(val, ',');
            if (comma && comma - val < 8 && strlen(comma + 1) < 8) {
                memcpy(l1, val, comma - val);
                strcpy(l2, comma + 1);
            }
            if ((o.tokenize_src = tok_lang_parse(l1)) < 0 || (o.tokenize_tgt = tok_lang_parse(l2)) < 0) {
                fprintf(stderr, "nmt train: --tokenize '%s': expected SRC,TGT languages, e.g. en,fr\n", val);
                return CMD_USAGE;
            }
        } else if (!strcmp(a, "--max-time")) {
            if (parse_time(val, &o.max_time)) return CMD_USAGE;
        } else if (!strcmp(a, "--vocab")) {
            if (cmd_parse_long("train", a, val, 3, 4000000, &v)) return CMD_USAGE;
            o.cfg.src_vocab = o.cfg.tgt_vocab = (int)v;
        }
        LONGOPT("--src-vocab", 3, 4000000, o.cfg.src_vocab)
        LONGOPT("--tgt-vocab", 3, 4000000, o.cfg.tgt_vocab)
        LONGOPT("--emb", 1, 65536, o.cfg.emb)
        LONGOPT("--hid", 1, 65536, o.cfg.hid)
        LONGOPT("--att", 1, 65536, o.cfg.att)
        LONGOPT("--maxout", 1, 65536, o.cfg.maxout)
        LONGOPT("--window", 0, 100, o.cfg.window)
        LONGOPT("--max-len", 0, 100000, o.max_len)
        LONGOPT("--batch", 1, 100000, o.batch)
        LONGOPT("--sort-blocks", 1, 100000, o.sort_blocks)
        LONGOPT("--seed", 0, 0x7fffffffffffffffL, o.seed)
        LONGOPT("--threads", 1, 1024, o.threads)
        LONGOPT("--max-updates", 0, 0x7fffffffffffffffL, o.max_updates)
        LONGOPT("--max-epochs", 0, 1000000, o.max_epochs)
        LONGOPT("--valid-every", 0, 0x7fffffffffffffffL, o.valid_every)
        LONGOPT("--save-every", 0, 0x7fffffffffffffffL, o.save_every)
        LONGOPT("--patience", 0, 1000000, o.patience)
        LONGOPT("--log-every", 1, 0x7fffffffffffffffL, log_every)
        LONGOPT("--max-nonfinite", 0, 1000000, o.max_nonfinite)
        DBLOPT("--lr", 1e-12, 1e6, o.lr)
        DBLOPT("--clip", 0, 1e12, o.clip)
        DBLOPT("--dropout", 0, 0.99, o.dropout)
        DBLOPT("--lr-decay", 0, 1, o.lr_decay)
        DBLOPT("--fert-step-weight", 0, 1e6, o.cfg.fert_step_w)
        DBLOPT("--fert-left-weight", 0, 1e6, o.cfg.fert_left_w)
        else { fprintf(stderr, "nmt train: unknown option '%s' (nmt train --help)\n", a); return CMD_USAGE; }
#undef LONGOPT
#undef DBLOPT
    }
    if ((o.tok_lowercase || o.tok_normalize) && o.tokenize_src < 0) {
        fprintf(stderr, "nmt train: --lowercase and --normalize-punct go with --tokenize SRC,TGT\n");
        return CMD_USAGE;
    }
    if (!o.src || !o.tgt || !o.model) {
        fprintf(stderr, "nmt train: --src, --tgt and --model are required (nmt train --help)\n");
        return CMD_USAGE;
    }
    struct view view = {isatty(2), log_every, 0, 0, 0};
    o.stop = &stop_flag;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    nmt_err err;
    int rc = nmt_train(&o, on_report, &view, &err);
    if (rc == NMT_ERR_INTERRUPTED) {
        fprintf(stderr, "nmt train: %s\n", err.msg);
        return 130;
    }
    if (rc) {
        fprintf(stderr, "nmt train: error: %s\n", err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}

/* ------------------------------------------------------------------ nmt vocab */
int cmd_vocab(int argc, char **argv)
{
    const char *in = NULL;
    long K = 30002;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("Usage: nmt vocab [--size K] FILE\n"
                   "Prints the K-entry shortlist vocabulary of a tokenized text (ids 0 </s> and 1 <unk>, then words by\n"
                   "falling count, ties in byte order), one 'id<TAB>word<TAB>count' line each, and its coverage on stderr.\n"
                   "  --size K   entries counting </s> and <unk> (default 30002)\n");
            return CMD_OK;
        }
        if (!strcmp(argv[i], "--size")) {
            if (i + 1 >= argc) { fprintf(stderr, "nmt vocab: --size needs a value\n"); return CMD_USAGE; }
            if (cmd_parse_long("vocab", "--size", argv[++i], 3, 4000000, &K)) return CMD_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "nmt vocab: unknown option '%s'\n", argv[i]);
            return CMD_USAGE;
        } else if (in) {
            fprintf(stderr, "nmt vocab: one input file only\n");
            return CMD_USAGE;
        } else {
            in = argv[i];
        }
    }
    if (!in) { fprintf(stderr, "nmt vocab: no input file (nmt vocab --help)\n"); return CMD_USAGE; }
    textfile t;
    wordcount wc;
    nmt_err err;
    if (textfile_read(&t, !strcmp(in, "-") ? "/dev/stdin" : in, &err) || wordcount_build(&wc, &t, &err)) {
        fprintf(stderr, "nmt vocab: error: %s\n", err.msg);
        textfile_free(&t);
        return CMD_ERR;
    }
    printf("0\t</s>\t%ld\n1\t<unk>\t0\n", t.nlines);
    long shown = 0;
    for (long k = 0; k < wc.ntypes && shown < K - 2; k++) {
        if (!strcmp(wc.word[k], "</s>") || !strcmp(wc.word[k], "<unk>")) continue;
        printf("%ld\t%s\t%ld\n", shown + 2, wc.word[k], wc.count[k]);
        shown++;
    }
    fprintf(stderr, "nmt vocab: %ld of %ld word types kept; they cover %.2f%% of the %ld tokens\n", shown, wc.ntypes,
            100 * wordcount_coverage(&wc, (int)K), wc.ntokens);
    wordcount_free(&wc);
    textfile_free(&t);
    return CMD_OK;
}
