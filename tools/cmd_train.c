/* cmd_train.c: `nmt train`: option parsing, the live progress line, and
 * signal handling (SIGINT/SIGTERM/SIGHUP ask the library to checkpoint and stop). */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "cmd.h"
#include "mpi/comm_mpi.h"
#include "nmt.h"
#include "opt.h"
#include "opt_config.h"
#include "train/optim.h"
#include "text/tokenize.h"

static volatile int stop_flag;

/* SIGINT, SIGTERM and SIGHUP (unless ignored: nohup) ask for a checkpoint and a stop. They are
 * blocked in every thread and taken by sigwait in a thread of their own, so that no handler runs
 * on a compute thread's stack: with NMT_GEMM=onednn one interrupted training in four to six
 * aborted on a corrupted heap when the handler ran on the main thread's stack, none in 48 with
 * it on a stack of its own or off the compute threads (why, not established:
 * docs/results/robustness.md, "Interrupting training on oneDNN").
 * A second signal ends the program at once, by the signal's default action. */
static sigset_t stop_sigs;

static void *signal_waiter(void *arg)
{
    (void)arg;
    int sig;
    if (sigwait(&stop_sigs, &sig)) return NULL;
    stop_flag = 1;
    if (sigwait(&stop_sigs, &sig)) return NULL;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    signal(sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig); /* to this thread, the one that does not block it */
    return NULL;
}

/* For a thread that started before the mask and so does not block the signals (OpenBLAS's pthreads
 * build starts its workers when it loads): the same two steps, async-signal-safe. */
static void on_signal(int sig)
{
    if (!stop_flag) { stop_flag = 1; return; }
    signal(sig, SIG_DFL);
    raise(sig); /* pending until the handler returns, then the default action */
}

/* before any thread of ours starts (OpenMP's, MPI's): they inherit the blocked set */
static void catch_stop_signals(void)
{
    struct sigaction sa, hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a closed terminal or session checkpoints too, unless started ignoring it (nohup) */
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN) {
        sigaddset(&stop_sigs, SIGHUP);
        sigaction(SIGHUP, &sa, NULL);
    }
    pthread_t t;
    int rc = pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
    if (!rc && !(rc = pthread_create(&t, NULL, signal_waiter, NULL))) {
        pthread_detach(t);
        return;
    }
    /* no waiter: the handler takes them, on whichever thread they reach */
    pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL);
    fprintf(stderr, "nmt train: warning: no thread for the stop signals (%s): they are handled on the computing "
                    "threads\n", strerror(rc));
}

struct view { int tty; long log_every, last; int line_open; double lr; };

static void on_report(const nmt_train_report *r, void *user)
{
    struct view *v = user;
    char el[32], eta[32];
    cmd_hms(el, sizeof el, r->elapsed);
    cmd_hms(eta, sizeof eta, r->eta);
    if (r->kind == NMT_REPORT_PROGRESS) {
        if (!v->tty && r->update - v->last < v->log_every) return;
        v->last = r->update;
        char comm[64] = ""; /* several ranks: the time spent summing across them */
        if (r->comm_bytes > 0) snprintf(comm, sizeof comm, " | comm %.0f%%", 100 * r->comm_frac);
        char guided[48] = ""; /* guided alignment's cost beside the NLL, when it is on */
        if (isfinite(r->guided_cost)) snprintf(guided, sizeof guided, " | guided %.3f", r->guided_cost);
        fprintf(stderr, "%supdate %ld | epoch %d %5.1f%% | cost %.3f%s | gnorm %.2f | %.0f tok/s%s | %s elapsed | ETA %s%s",
                v->tty ? "\r\033[K" : "[train] ", r->update, r->epoch, 100 * r->epoch_frac, r->cost, guided, r->grad_norm,
                r->tok_per_s, comm, el, eta, v->tty ? "" : "\n");
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
        fprintf(stderr, "[valid] update %ld epoch %d: dev NLL %.4f per sentence, %.4f per token, perplexity %.3f",
                r->update, r->epoch, r->dev_nll, r->dev_nll_tok, r->dev_ppl);
        if (r->dev_bleu == r->dev_bleu) fprintf(stderr, ", BLEU %.2f", r->dev_bleu); /* NaN: not asked for */
        if (r->dev_chrf == r->dev_chrf) fprintf(stderr, ", chrF %.2f", r->dev_chrf);
        fprintf(stderr, "%s\n", r->improved ? " (best so far, saved)" : "");
        if (v->lr > 0 && r->lr != v->lr) fprintf(stderr, "[valid] learning rate lowered to %g\n", r->lr);
        v->lr = r->lr;
        break;
    case NMT_REPORT_SAVE: fprintf(stderr, "[train] checkpoint %s at update %ld\n", r->msg, r->update); break;
    case NMT_REPORT_WARN: break; /* the library logs it too: cmd_log prints it */
    case NMT_REPORT_END:
        fprintf(stderr, "[train] %s after %ld updates, %s\n", r->msg, r->update, el);
        if (r->comm_bytes > 0)
            fprintf(stderr, "[train] summing across ranks: %.1f%% of the time, %.4f s and %.3f MB per update from each rank\n",
                    100 * r->comm_frac, r->comm_s, r->comm_bytes / 1e6);
        break;
    }
    fflush(stderr);
}

/* ------------------------------------------------------------------ options */
static const char *parse_time(void *dst, const char *s, int nth)
{
    (void)nth;
    char *end;
    double v = strtod(s, &end);
    double mul = !*end ? 1 : !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : -1;
    if (end == s || mul < 0 || !(v >= 0)) return "expected seconds or a number with s, m, h or d";
    *(double *)dst = v * mul;
    return NULL;
}

/* --tokenize SRC,TGT into int[2] */
static const char *parse_langs(void *dst, const char *s, int nth)
{
    (void)nth;
    int *l = dst;
    char l1[8] = "", l2[8] = "";
    const char *comma = strchr(s, ',');
    if (comma && comma - s < 8 && strlen(comma + 1) < 8) {
        memcpy(l1, s, (size_t)(comma - s));
        strcpy(l2, comma + 1);
    }
    if ((l[0] = tok_lang_parse(l1)) < 0 || (l[1] = tok_lang_parse(l2)) < 0) return "expected SRC,TGT languages, e.g. en,fr";
    return NULL;
}

/* --spm-model A[,B] into struct spm_paths: one joint model, or a source and a target model */
struct spm_paths { char buf[8192]; const char *src, *tgt; };

static const char *parse_spm_paths(void *dst, const char *s, int nth)
{
    (void)nth;
    struct spm_paths *p = dst;
    if (!*s || strlen(s) >= sizeof p->buf) return "expected FILE or SRC_FILE,TGT_FILE";
    strcpy(p->buf, s);
    char *comma = strchr(p->buf, ',');
    p->src = p->buf;
    p->tgt = NULL;
    if (comma) {
        *comma = 0;
        p->tgt = comma + 1;
        if (!*p->src || !*p->tgt || strchr(p->tgt, ',')) return "expected FILE or SRC_FILE,TGT_FILE";
    }
    return NULL;
}

static const char *parse_preset(void *dst, const char *s, int nth)
{
    (void)nth;
    nmt_err e;
    return nmt_train_preset(dst, s, &e) ? "expected paper, hour, hour-v1 or transformer-hour" : NULL;
}

#define ANY_LONG OPT_LONG_MAX

/* --valid-metrics bleu chrf (Marian's spelling, one per argument) or bleu,chrf into
 * nmt_train_opts; dst NULL only asks whether val is a metric list. The first value given
 * replaces earlier ones (an option file's), later ones add; each metric once. */
static const char *parse_valid_metrics(void *dst, const char *val, int nth)
{
    static const char *const bad = "expected ppl, bleu or chrf (the first decides the best model)";
    int got[NMT_MAX_VALID_METRICS], n = 0;
    char buf[64];
    if (strlen(val) >= sizeof buf) return bad;
    strcpy(buf, val);
    for (char *m = strtok(buf, ", "); m; m = strtok(NULL, ", ")) {
        int k = nmt_metric_parse(m);
        if (k < 0 || n == NMT_MAX_VALID_METRICS) return bad;
        got[n++] = k;
    }
    if (!n) return bad;
    nmt_train_opts *o = dst;
    if (!o) return NULL;
    if (nth == 0) o->n_valid_metrics = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < o->n_valid_metrics; j++)
            if (o->valid_metrics[j] == got[i]) return "each metric once";
        if (o->n_valid_metrics == NMT_MAX_VALID_METRICS) return bad;
        o->valid_metrics[o->n_valid_metrics++] = got[i];
    }
    return NULL;
}

/* The subword options together; OPT_GO or CMD_USAGE after saying why. */
static int check_subword_options(const nmt_train_opts *o, const opt_cmd *c)
{
    const char *why = NULL;
    int units = o->subwords || o->spm_src;
    if (o->subwords && o->spm_src) why = "--subwords trains a SentencePiece model, --spm-model reads one: give one of them";
    else if (units && (opt_given(c, "--vocab") || opt_given(c, "--src-vocab") || opt_given(c, "--tgt-vocab")))
        why = "a subword model's vocabularies are its pieces: size them with --subword-vocab, not --vocab";
    else if (!o->subwords && (opt_given(c, "--subword-vocab") || o->subword_joint))
        why = "--subword-vocab and --joint go with --subwords";
    else if (o->lang_src >= 0 && (!units || o->tokenize_src >= 0))
        why = "--lang goes with subword units on text that is not --tokenize'd (which names the languages itself)";
    else if ((o->tok_lowercase || o->tok_normalize) && o->tokenize_src < 0 && !units)
        why = "--lowercase and --normalize-punct go with --tokenize SRC,TGT (or with subword units)";
    else if (o->tok_normalize && o->tokenize_src < 0 && o->lang_src < 0)
        why = "--normalize-punct needs the languages: --tokenize SRC,TGT or --lang SRC,TGT";
    if (!why) return OPT_GO;
    fprintf(stderr, "nmt train: error: %s\n", why);
    return CMD_USAGE;
}

static const char train_usage[] =
    "Usage: nmt train --src FILE --tgt FILE --model FILE [options]\n"
    "Trains an RNNsearch or RNNencdec model (Bahdanau et al. 2014, Appendix B) on a tokenized parallel\n"
    "corpus (one sentence per line, tokens separated by spaces, UTF-8), or on raw text with --tokenize\n"
    "(the stages stored in the model, which then reads and writes raw text), or with subword units\n"
    "(--subwords: SentencePiece, stored in the model likewise; docs/SUBWORDS.md).\n\n";

/* What train's options read into values of their own before nmt_train_opts takes them. */
struct train_vals {
    long seed, *log_every;
    int langs[2], text_langs[2], units, dump, bf16, align_head;
    const char *config;
};

static struct spm_paths spm; /* o keeps pointers into it */

/* -c FILE is read, so no file the run writes may be it (the library checks the others it reads):
 * OPT_GO, or the exit status after saying why. */
static int config_not_written(const char *config, const nmt_train_opts *o)
{
    path_role in[1] = {{config, "the option file (-c)"}};
    path_role out[] = {{o->model, "the model"}, {o->checkpoint, "the checkpoint"}, {o->log_tsv, "the training log"},
                       {o->batch_log, "the batch log"}, {o->cost_log, "the cost log"}, {o->valid_output, "the dev translations"}};
    nmt_err err;
    if (!config || !path_check_outputs(in, 1, out, (int)(sizeof out / sizeof *out), &err)) return OPT_GO;
    fprintf(stderr, "nmt train: error: %s\n", err.msg);
    return CMD_ERR;
}

/* The option file, --dump-config and the data options into t; how many. */
static size_t data_options(opt *t, nmt_train_opts *o, struct train_vals *x)
{
    const opt part[] = {
        {.names = "-c --config", .kind = OPTK_STR, .dst = &x->config, .arg = "FILE", .flags = OPT_CONFIG | OPT_ONCE | OPT_NONEMPTY,
         .help = "options from a YAML file, 'name: value' per line with the long names\n"
         "below (hid: 256, lowercase: true); options given here override it"},
        {.names = "--dump-config", .kind = OPTK_FLAG, .dst = &x->dump, .lo = 1, .flags = OPT_DUMP,
         .help = "print the options in effect as such a file, and stop"},
        OPT_HEAD("Data:"),
        OPT_STR("--src", &o->src, "FILE", "training corpus, source side"),
        OPT_STR("--tgt", &o->tgt, "FILE", "training corpus, target side"),
        OPT_STR("--valid-src", &o->valid_src, "FILE", "dev set, source side: dev NLL and perplexity, best model, early stopping"),
        OPT_STR("--valid-tgt", &o->valid_tgt, "FILE", "dev set, target side"),
        OPT_STR("--model", &o->model, "FILE", "where the best model (by dev NLL) is written"),
        OPT_STR("--checkpoint", &o->checkpoint, "FILE", "latest training state (default MODEL.ckpt)"),
        OPT_STR("--resume", &o->resume, "FILE", "continue from a checkpoint (same corpus; its architecture,\n"
                "vocabularies, optimizer, learning rate and its schedule, dropout,\n"
                "label smoothing, batching and precision are kept; the stopping limits\n"
                "are the ones given now)"),
        OPT_FLAG("--overwrite", &o->overwrite, 1, "start over where MODEL or its checkpoint exist (an earlier run's):\n"
                 "both are replaced at the first save (without --resume or this, train\n"
                 "refuses to start there)"),
        OPT_STR1("--pretrained-model", &o->pretrained, "FILE", "fine-tune: start from this model's weights, architecture,\n"
                 "vocabularies (a subword model's text stages too), with a fresh\n"
                 "optimizer and schedule (a model or a checkpoint; --resume then goes\n"
                 "on from the new run's)"),
        OPT_STR("--log", &o->log_tsv, "FILE", "TSV log of validations (default MODEL.log.tsv)"),
        OPT_STR("--batch-log", &o->batch_log, "FILE", "each update's pairs as corpus line numbers, one line per update"),
        OPT_STR("--cost-log", &o->cost_log, "FILE", "each update's number, cost (NLL per sentence) and gradient norm,\n"
                "tab-separated, one line per update, all 17 digits"),
        OPT_FN("--tokenize", x->langs, parse_langs, "SRC,TGT", "the files are raw text: Moses-tokenize them (e.g. en,fr)"),
        OPT_FLAG("--lowercase", &o->tok_lowercase, 1, "with --tokenize (or --subwords): lowercase first"),
        OPT_FLAG("--normalize-punct", &o->tok_normalize, 1, "with --tokenize (or --subwords and --lang): normalize punctuation\n"
                 "first (with --lowercase: the Multi30k preprocessing; stored in the\n"
                 "model, which applies them itself)"),
        {.names = "--preset", .kind = OPTK_FN, .dst = o, .fn = parse_preset, .flags = OPT_FIRST, .arg = "NAME",
         .help = "paper (Appendix B; the defaults below) | hour (the best dev\n"
         "perplexity found for an hour on 2 cores: emb/hid/att/maxout 256,\n"
         "vocab 10000, Adam lr 0.002, dropout 0.5, dropout-emb 0.2,\n"
         "dropout-rnn 0.2, label-smoothing 0.1, tied-embeddings, init\n"
         "glorot-att, lr-decay 0.5, patience 4, max-time 1h) | hour-v1 (hour\n"
         "before those five options) | transformer-hour (--arch transformer,\n"
         "d 128, 4+4 layers, 4 heads, ffn 256, vocab 10000, tied-embeddings,\n"
         "dropout 0.3, label-smoothing 0.1, Adam lr 0.002 warmed up over and\n"
         "decayed after 1000 updates, clip 5, patience 5, max-time 1h);\n"
         "options given beside it override its values"},
    };
    memcpy(t, part, sizeof part);
    return sizeof part / sizeof *part;
}

/* The subword options into t; how many. */
static size_t subword_options(opt *t, nmt_train_opts *o, struct train_vals *x)
{
    const opt part[] = {
        OPT_HEAD("Subword units (SentencePiece; the model then reads and writes raw text):"),
        {.names = "--subwords", .kind = OPTK_CHOICE, .dst = &x->units, .arg = "unigram|bpe", .flags = OPT_IF_GIVEN,
         .help = "train a SentencePiece model of this kind on the training corpus\n"
                 "(after its text stages) and store it in the model file"},
        {.names = "--subword-vocab", .kind = OPTK_INT, .dst = &o->subword_vocab, .lo = 300, .hi = 1000000, .arg = "N",
         .flags = OPT_IF_GIVEN, /* only with --subwords: a dumped default would refuse a word model's file */
         .help = "pieces per SentencePiece model, EOS and UNK counted (default {};\n"
                 "the 256 byte pieces of byte fallback need room)"},
        OPT_FLAG("--joint", &o->subword_joint, 1, "one SentencePiece model for both sides, trained on both"),
        OPT_FN("--spm-model", &spm, parse_spm_paths, "FILE[,FILE]", "existing SentencePiece model(s) instead of --subwords: one joint\n"
               "model, or source and target"),
        OPT_FN("--lang", x->text_langs, parse_langs, "SRC,TGT", "the sides' languages, for --normalize-punct on raw text without\n"
               "--tokenize (subword models)"),
    };
    memcpy(t, part, sizeof part);
    return sizeof part / sizeof *part;
}

/* The model's options into t; how many. */
static size_t model_options(opt *t, nmt_train_opts *o)
{
    const opt part[] = {
        OPT_HEAD("Model:"),
        OPT_ENUM("--arch", &o->cfg.arch, nmt_arch_parse, "NAME",
                 "rnnsearch, rnnenc, recatt, inputfeed, markov, locfer, fertdec, recatt+fertdec or transformer",
                 "rnnsearch | rnnenc (Bahdanau et al.) | recatt | inputfeed | markov |\n"
                 "locfer | fertdec | recatt+fertdec (Feng et al. 2016; default rnnsearch)\n"
                 "| transformer (Vaswani et al. 2017; its options below)"),
        OPT_INT("--window", &o->cfg.window, 0, 100, "K", "Markov / LocFer window half-width (default {})"),
        OPT_DBL("--fert-step-weight", &o->cfg.fert_step_w, 0, 1e6, "X", "FertDec's step-decay cost weight (default {})"),
        OPT_DBL("--fert-left-weight", &o->cfg.fert_left_w, 0, 1e6, "X", "FertDec's left-over cost weight (default {})"),
        {.names = "--vocab", .kind = OPTK_INT, .dst = &o->cfg.src_vocab, .dst2 = &o->cfg.tgt_vocab, .lo = 3, .hi = 4000000,
         .arg = "K", .help = "shortlist per side, counting EOS and UNK (default {})", .flags = OPT_IF_GIVEN},
        /* dumped only when given: a subword model's file refuses them, and their defaults are defaults */
        {.names = "--src-vocab", .kind = OPTK_INT, .dst = &o->cfg.src_vocab, .lo = 3, .hi = 4000000, .arg = "K",
         .help = "source shortlist alone", .flags = OPT_IF_GIVEN},
        {.names = "--tgt-vocab", .kind = OPTK_INT, .dst = &o->cfg.tgt_vocab, .lo = 3, .hi = 4000000, .arg = "K",
         .help = "target shortlist alone", .flags = OPT_IF_GIVEN},
        OPT_INT("--emb", &o->cfg.emb, 1, 65536, "N", "word embedding size (default {})"),
        OPT_INT("--hid", &o->cfg.hid, 1, 65536, "N", "GRU units per encoder direction and in the decoder (default {})"),
        OPT_INT("--att", &o->cfg.att, 1, 65536, "N", "alignment model hidden units (default {})"),
        OPT_INT("--maxout", &o->cfg.maxout, 1, 65536, "N", "maxout units of the deep output (default {})"),
        OPT_FLAG("--tied-embeddings --tie-embeddings", &o->cfg.tied_emb, 1, "the target embeddings are also the softmax layer's weights (stored\n"
                 "once; needs --emb equal to --maxout; the hour preset sets it)"),
        OPT_FLAG("--no-tied-embeddings", &o->cfg.tied_emb, 0, "separate target embeddings and softmax weights (the default; undoes\n"
                 "the hour preset's --tied-embeddings)"),
        OPT_CHOICE("--init", &o->init, "paper|glorot-att|glorot", "paper (Appendix B; default) | glorot-att (the attention's weights\n"
                   "Glorot-uniform: it starts attending at once) | glorot (every weight matrix)"),
    };
    memcpy(t, part, sizeof part);
    return sizeof part / sizeof *part;
}

/* an option dumped only when given: a recurrent model's run dumps what it always did */
#define TF_INT(n, d, l, u, a, h) {.names = n, .kind = OPTK_INT, .dst = (d), .lo = l, .hi = u, .arg = a, .help = h, .flags = OPT_IF_GIVEN}
#define TF_DBL(n, d, l, u, a, h) {.names = n, .kind = OPTK_DBL, .dst = (d), .lo = l, .hi = u, .arg = a, .help = h, .flags = OPT_IF_GIVEN}

/* The Transformer's options into t (Marian's names where it has them); how many. */
static size_t transformer_options(opt *t, nmt_train_opts *o, struct train_vals *x)
{
    const opt part[] = {
        OPT_HEAD("Transformer (--arch transformer; docs/TRAINING.md):"),
        TF_INT("--dim-model --dim-emb", &o->tf.emb, 2, 65536, "N", "model and embedding size d (default {})"),
        TF_INT("--enc-depth", &o->tf.enc_depth, 1, NMT_MAX_DEPTH, "N", "encoder layers (default {})"),
        TF_INT("--dec-depth", &o->tf.dec_depth, 1, NMT_MAX_DEPTH, "N", "decoder layers (default {})"),
        TF_INT("--heads --transformer-heads", &o->tf.heads, 1, 1024, "N", "attention heads; d must be a multiple (default {})"),
        TF_INT("--dim-ffn --transformer-dim-ffn", &o->tf.ffn, 1, 262144, "N", "the feed-forward layers' inner size (default {})"),
        {.names = "--transformer-ffn-activation", .kind = OPTK_CHOICE, .dst = &o->tf.ffn_act, .arg = "relu|gelu|swish",
         .flags = OPT_IF_GIVEN, .help = "relu (default) | gelu | swish"},
        {.names = "--transformer-norm", .kind = OPTK_CHOICE, .dst = &o->tf.post_norm, .arg = "pre|post", .flags = OPT_IF_GIVEN,
         .help = "layer norm before each block, with one on top of each stack\n(pre, default), or after each residual sum (post)"},
        TF_DBL("--transformer-ln-eps", &o->tf.ln_eps, 1e-30, 1, "E", "the layer norms' epsilon (default {})"),
        TF_INT("--max-positions", &o->tf.max_pos, 0, 65536, "N", "learned positions, N per side (default {}: sinusoidal)"),
        {.names = "--tied-embeddings-all", .kind = OPTK_FLAG, .dst = &o->cfg.tied_emb, .lo = 2, .flags = OPT_IF_GIVEN,
         .help = "source, target and output embeddings one matrix (needs one joint\nvocabulary: --subwords with --joint)"},
        TF_DBL("--transformer-dropout", &o->dropout_tf, 0, 0.99, "P", "dropout on every block's output and the embeddings (default {})"),
        TF_DBL("--transformer-dropout-attention", &o->dropout_attn, 0, 0.99, "P", "dropout on the attention weights (default {})"),
        TF_DBL("--transformer-dropout-ffn", &o->dropout_ffn, 0, 0.99, "P", "dropout inside the feed-forward layers (default {})"),
        TF_INT("--alignment-layer", &o->tf.align_layer, 1, NMT_MAX_DEPTH, "N", "the decoder layer (from 1) whose encoder-decoder attention gives\n"
               "alignments and takes --guided-alignment's cost (default: the last)"),
        TF_INT("--alignment-head", &x->align_head, 0, 1023, "H", "... and its head (from 0; default {}): with --guided-alignment\n"
               "that head is trained and gives alignments; without, the heads'\nmean gives them unless this is given"),
    };
    memcpy(t, part, sizeof part);
    return sizeof part / sizeof *part;
}

/* Each family's own options: the other family's are refused (the library reads only its own) */
static const char *const tf_only[] = {"--dim-model", "--enc-depth", "--dec-depth", "--heads", "--dim-ffn",
                                      "--transformer-ffn-activation", "--transformer-norm", "--transformer-ln-eps",
                                      "--max-positions", "--tied-embeddings-all", "--transformer-dropout",
                                      "--transformer-dropout-attention", "--transformer-dropout-ffn", "--alignment-layer",
                                      "--alignment-head"};
static const char *const rnn_only[] = {"--emb", "--hid", "--att", "--maxout", "--window", "--fert-step-weight",
                                       "--fert-left-weight", "--dropout", "--dropout-emb", "--dropout-rnn", "--init"};
/* of tf_only, those dumped only when given: a switch, and values whose default means "not set"
 * (alignment-layer's 0 is below what the option accepts) */
static const char *const tf_if_given[] = {"--tied-embeddings-all", "--alignment-layer", "--alignment-head"};

static int listed(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, list[i])) return 1;
    return 0;
}

/* A Transformer's dump (--dump-config) lists its own sizes and dropouts, given or not, and none of
 * the recurrent models' options, which reading it back would refuse; a recurrent model's dump is
 * what it always was. */
static void family_dump(const nmt_train_opts *o, opt_cmd *c)
{
    if (o->cfg.arch != NMT_ARCH_TRANSFORMER) return;
    for (size_t i = 0; i < sizeof rnn_only / sizeof *rnn_only; i++) opt_find_long(c, rnn_only[i] + 2)->flags |= OPT_IF_GIVEN;
    for (size_t i = 0; i < sizeof tf_only / sizeof *tf_only; i++)
        if (!listed(tf_only[i], tf_if_given, sizeof tf_if_given / sizeof *tf_if_given))
            opt_find_long(c, tf_only[i] + 2)->flags &= ~OPT_IF_GIVEN;
}

/* The other family's options given: OPT_GO or CMD_USAGE. */
static int check_family(const nmt_train_opts *o, const opt_cmd *c)
{
    int tf = o->cfg.arch == NMT_ARCH_TRANSFORMER;
    const char *const *other = tf ? rnn_only : tf_only;
    size_t n = tf ? sizeof rnn_only / sizeof *rnn_only : sizeof tf_only / sizeof *tf_only;
    for (size_t i = 0; i < n; i++)
        if (opt_given(c, other[i])) {
            fprintf(stderr, "nmt train: error: %s belongs to %s; not with --arch %s\n", other[i],
                    tf ? "the recurrent models" : "--arch transformer", nmt_arch_name(o->cfg.arch));
            return CMD_USAGE;
        }
    return OPT_GO;
}

/* The training loop's options into t; how many. */
static size_t loop_options(opt *t, nmt_train_opts *o, struct train_vals *x)
{
    const opt part[] = {
        OPT_HEAD("Training:"),
        OPT_INT("--max-len", &o->max_len, 0, 100000, "N", "skip pairs with a side over N words (default {}; 0 = none)"),
        OPT_INT("--batch", &o->batch, 1, 100000, "N", "sentence pairs per update (default {})"),
        OPT_INT("--sort-blocks", &o->sort_blocks, 1, 100000, "K", "blocks of K batches sorted by length (default {}; K x --batch at most\n2^31-1)"),
        OPT_FLAG("--reshuffle", &o->reshuffle, 1, "reshuffle every epoch (default: shuffle once, as the paper)"),
        OPT_ENUM("--optimizer", &o->optimizer, optim_parse, "NAME", "adadelta, adagrad, adam or sgd",
                 "adadelta | adagrad | adam | sgd (default adadelta)"),
        OPT_DBL("--lr", &o->lr, 1e-12, 1e6, "X", "learning rate (default: 1 adadelta, 0.01 adagrad, 0.001 adam)"),
        OPT_DBL("--clip", &o->clip, 0, 1e12, "X", "rescale the gradient to this L2 norm when larger (default {})"),
        OPT_DBL("--dropout", &o->dropout, 0, 0.99, "P", "dropout on the maxout output (default {}; Feng et al. use 0.5)"),
        OPT_DBL("--dropout-emb", &o->dropout_emb, 0, 0.99, "P", "variational dropout on the source and target embeddings: one mask\n"
                "per sentence, the same at every position (default {})"),
        OPT_DBL("--dropout-rnn", &o->dropout_rnn, 0, 0.99, "P", "variational dropout on the state the GRUs' recurrent products read\n"
                "(encoder and decoder; one mask per sentence; default {})"),
        OPT_DBL("--label-smoothing", &o->label_smoothing, 0, 0.99, "E", "training loss per target token (1-E)(-log p(y)) + E x the mean\n"
                "of -log p over the target vocabulary (default {}; dev NLL unsmoothed)"),
        OPT_DBL("--lr-decay", &o->lr_decay, 0, 1, "F", "multiply the learning rate by F after each validation that does\n"
                "not improve the dev NLL (default {}: never)"),
        OPT_STR1("--guided-alignment", &o->guided_alignment, "FILE|ibm", "guided alignment: word links of the training corpus, one line per\n"
                 "pair, Pharaoh 'i-j' (source word i, target word j, from 0; as\n"
                 "fast_align and nmt ibm write them), that the attention is\n"
                 "trained towards (attention models; not with --subwords or --tokenize);\n"
                 "ibm: nmt ibm --sym gdfa's links of the corpus, made first and kept\n"
                 "as MODEL.ibm-links (made again when a corpus file is newer)"),
        /* dumped only when given: a run without guidance dumps what it always did */
        {.names = "--guided-alignment-weight", .kind = OPTK_DBL, .dst = &o->guided_weight, .lo = 0, .hi = 1e6, .arg = "W",
         .flags = OPT_IF_GIVEN, .help = "its cost's weight beside the NLL, per linked target word (default 0.1,\n"
                                        "Marian's; 0.05 for a Transformer, Garg et al.'s)"},
        {.names = "--guided-alignment-cost", .kind = OPTK_CHOICE, .dst = &o->guided_cost, .arg = "ce|mse", .flags = OPT_IF_GIVEN,
         .help = "ce (default): cross-entropy of the attention against the links,\n"
                 "normalised per target word | mse: squared error (Chen et al. 2016)"},
        OPT_LONG("--lr-warmup", &o->lr_warmup, 0, ANY_LONG, "N", "raise the learning rate linearly over the first N updates: update u\n"
                 "uses lr x u/N (default {}: none)"),
        OPT_LONG("--lr-decay-inv-sqrt", &o->lr_decay_inv_sqrt, 0, ANY_LONG, "N", "after N updates, update u uses lr x sqrt(N/u) (default {}: none)"),
        OPT_LONG("--seed", &x->seed, 0, ANY_LONG, "N", "random seed (default {})"),
        OPT_INT("--threads", &o->threads, 1, 1024, "N", "threads (default: all cores)"),
        CMD_DEVICE_OPT,
        OPT_CHOICE("--precision", &x->bf16, "fp32|bf16", "the training step's matrix products: fp32 (default), or bf16\n"
                   "with FP32 sums beside FP32 weights, gradients and optimizer\n"
                   "(AVX512_BF16; refused where the CPU lacks it; kept on --resume)"),
        OPT_INT("--max-nonfinite", &o->max_nonfinite, 0, 1000000, "N", "updates in a row with a NaN/Inf cost or gradient that are\n"
                "skipped before training stops (default {})"),
    };
    memcpy(t, part, sizeof part);
    return sizeof part / sizeof *part;
}

/* The options of stopping and saving into t; how many. */
static size_t stop_options(opt *t, nmt_train_opts *o, struct train_vals *x)
{
    const opt part[] = {
        OPT_HEAD("Stopping and saving:"),
        OPT_LONG("--max-updates", &o->max_updates, 0, ANY_LONG, "N", "stop after N updates (default {}: no limit)"),
        OPT_INT("--max-epochs", &o->max_epochs, 0, 1000000, "N", "stop after N epochs (default {}: no limit)"),
        OPT_FN("--max-time", &o->max_time, parse_time, "T", "stop after T seconds, or T with s/m/h/d (default: no limit)"),
        OPT_LONG("--valid-every", &o->valid_every, 0, ANY_LONG, "N", "validate every N updates (default {}: every epoch)"),
        OPT_LONG("--save-every", &o->save_every, 0, ANY_LONG, "N", "checkpoint every N updates (default {}; also at validations)"),
        OPT_INT("--patience", &o->patience, 0, 1000000, "P", "stop after P validations without improvement (default {}; 0 = never)"),
        {.names = "--valid-metrics --valid-metric", .kind = OPTK_FN, .dst = o, .fn = parse_valid_metrics, .flags = OPT_MORE,
         .arg = "M...", .help = "ppl | bleu | chrf, one or more (default ppl): measured at each\n"
         "validation and logged; the first decides the best model, --lr-decay\n"
         "and --patience. BLEU and chrF translate the dev set (--valid-beam)\n"
         "and score it as sacreBLEU does (13a, case-sensitive) against the dev\n"
         "target after the text stages"},
        OPT_INT("--valid-beam", &o->valid_beam, 1, 1000, "K", "beam size of BLEU/chrF validation (default {}; length-normalised)"),
        OPT_STR1("--valid-translation-output", &o->valid_output, "FILE", "write each validation's dev translations (--valid-beam) to\n"
                 "FILE, {U} and {E} replaced by the update and the epoch"),
        OPT_INT("--keep-best", &o->keep_best, 0, NMT_MAX_KEEP_BEST, "K", "also keep the K best models by the first metric, as MODEL with\n"
                ".uUPDATE before its extension, listed in MODEL.best.tsv (for nmt\n"
                "average; default {})"),
        OPT_LONG("--log-every", x->log_every, 1, ANY_LONG, "N", "progress lines every N updates when stderr is not a terminal ({})"),
        OPT_OLD("--normalize", "--normalize-punct"),
    };
    memcpy(t, part, sizeof part);
    return sizeof part / sizeof *part;
}

/* The values train's options read on their own into o, then the subword options checked
 * together; OPT_GO or CMD_USAGE. */
static int apply_options(nmt_train_opts *o, const opt_cmd *c, const struct train_vals *x)
{
    o->seed = (uint64_t)x->seed;
    o->valid_scorer = nmt_metric_score; /* libnmt-eval's, which the program links */
    if (opt_given(c, "--tokenize")) {
        o->tokenize_src = x->langs[0];
        o->tokenize_tgt = x->langs[1];
    }
    if (opt_given(c, "--lang")) {
        o->lang_src = x->text_langs[0];
        o->lang_tgt = x->text_langs[1];
    }
    if (opt_given(c, "--subwords")) o->subwords = x->units + 1; /* SPM_UNIGRAM, SPM_BPE */
    o->precision = x->bf16 ? NMT_PREC_BF16 : NMT_PREC_FP32;
    if (opt_given(c, "--alignment-head")) o->tf.align_head = x->align_head + 1; /* the config's count from 1 */
    o->spm_src = spm.src;
    o->spm_tgt = spm.tgt;
    int rc = check_family(o, c);
    return rc == OPT_GO ? check_subword_options(o, c) : rc;
}

#define TRAIN_MAX_OPTS 128 /* room for the table: train has about 90 options */

/* The options of `nmt train` into o, and the options in effect as YAML into *yaml (the caller's
 * to free); OPT_GO, or the exit status (--dump-config prints them and stops). */
static int train_options(nmt_train_opts *o, long *log_every, int argc, char **argv, char **yaml)
{
    struct train_vals x = {.seed = (long)o->seed, .log_every = log_every, .langs = {-1, -1}, .text_langs = {-1, -1}};
    opt table[TRAIN_MAX_OPTS];
    size_t n = data_options(table, o, &x);
    n += subword_options(table + n, o, &x);
    n += model_options(table + n, o);
    n += transformer_options(table + n, o, &x);
    n += loop_options(table + n, o, &x);
    n += stop_options(table + n, o, &x);
    NMT_ASSERT(n < TRAIN_MAX_OPTS);
    table[n] = (opt)OPT_END;
    opt_cmd c = {"train", train_usage,
                 "SIGINT, SIGTERM and SIGHUP (unless started under nohup) write a checkpoint and stop\n"
                 "(exit 130); --resume goes on from it.\n"
                 "Started by Open MPI's mpirun (mpirun -np N nmt train ..., or across machines with\n"
                 "--hostfile), the N processes train one model: each computes the gradient of its share\n"
                 "of every minibatch, the gradients are summed, rank 0 validates and writes the files\n"
                 "(docs/SCALING.md).\n", table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    char lost[64];
    family_dump(o, &c);
    if (!(*yaml = opt_dump(&c, lost, sizeof lost))) { fprintf(stderr, "nmt train: error: out of memory\n"); return CMD_ERR; }
    if (x.dump && *lost) { /* the run itself goes on: its checkpoint keeps the rest of the options */
        fprintf(stderr, "nmt train: error: --dump-config: the value of %s is not UTF-8, which a YAML file cannot hold\n", lost);
        return CMD_ERR;
    }
    if (x.dump && strlen(*yaml) > OPT_CONFIG_MAX_BYTES) {
        fprintf(stderr, "nmt train: error: --dump-config: the options make more than 1 MiB of YAML, which -c refuses\n");
        return CMD_ERR;
    }
    if (x.dump) {
        fputs(*yaml, stdout);
        return CMD_OK;
    }
    rc = apply_options(o, &c, &x);
    return rc == OPT_GO ? config_not_written(x.config, o) : rc;
}

/* Under mpirun: MPI started, o->comm this rank's, and ranks other than 0 quiet (rank 0 reports
 * for the job). Returns OPT_GO or the exit status. */
static int mpi_start(nmt_comm *comm, nmt_train_opts *o, struct view *v)
{
    nmt_err err;
    if (comm_mpi_open(comm, &err)) {
        fprintf(stderr, "nmt train: error: %s\n", err.msg);
        return CMD_ERR;
    }
    o->comm = comm;
    if (comm->rank) {
        v->tty = 0;
        nmt_set_log(NULL, NULL);
    }
    return OPT_GO;
}

/* --guided-alignment ibm: the corpus aligned by nmt ibm (gdfa) into MODEL.ibm-links, or that file
 * again when it is newer than both corpus files; o then reads it. 0, or the exit status. */
static int ibm_links(nmt_train_opts *o, char *path, size_t cap, int rank, int size)
{
    if (!o->guided_alignment || strcmp(o->guided_alignment, "ibm")) return 0;
    if (size > 1) {
        fprintf(stderr, "nmt train: error: --guided-alignment ibm: with Open MPI, give the links file (nmt ibm --sym gdfa)\n");
        return CMD_USAGE;
    }
    snprintf(path, cap, "%s.ibm-links", o->model);
    struct stat l, s, t;
    int fresh = !stat(path, &l) && !stat(o->src, &s) && !stat(o->tgt, &t) && l.st_mtime >= s.st_mtime && l.st_mtime >= t.st_mtime;
    nmt_err err;
    if (fresh && !rank) fprintf(stderr, "[train] guided alignment: the links of %s (newer than the corpus)\n", path);
    if (!fresh) {
        fprintf(stderr, "[train] guided alignment: aligning the corpus with nmt ibm --sym gdfa into %s\n", path);
        if (cmd_ibm_links(o->src, o->tgt, path, &err)) {
            fprintf(stderr, "nmt train: error: --guided-alignment ibm: %s\n", err.msg);
            return CMD_ERR;
        }
    }
    o->guided_alignment = path;
    return 0;
}

/* nmt train once its options are read. */
static int run_train(nmt_train_opts *op, long log_every)
{
    nmt_train_opts o = *op;
    int rc;
    if (!o.src || !o.tgt || !o.model) {
        fprintf(stderr, "nmt train: error: --src, --tgt and --model are required (nmt train --help)\n");
        return CMD_USAGE;
    }
    struct view view = {isatty(2), log_every, 0, 0, 0};
    nmt_comm comm = {0, 1, NULL, NULL, NULL, NULL};
    catch_stop_signals();
    int mpi = comm_mpi_launched();
    if (mpi && (rc = mpi_start(&comm, &o, &view)) != OPT_GO) return rc;
    char links[4200];
    if ((rc = ibm_links(&o, links, sizeof links, comm.rank, comm.size))) {
        if (mpi) comm_mpi_close(&comm, 1);
        return rc;
    }
    const char *pin = blas_kernels_user_pin();
    if (pin && !comm.rank)
        fprintf(stderr, "nmt train: note: OPENBLAS_CORETYPE=%s (from the environment) keeps OpenBLAS on AVX2 kernels on this "
                "AVX-512 CPU; unset it to let nmt time the kernel sets and run the fastest (nmt blas-kernels)\n", pin);
    o.stop = &stop_flag;
    nmt_err err;
    rc = nmt_train(&o, on_report, &view, &err);
    /* A failure all ranks share has its message on rank 0 alone; a message on a rank > 0 is that
     * rank's own. Rank 0 cannot tell the two apart, and the others may be waiting for a failed
     * rank inside a collective call (where MPI_Finalize would wait too): a failure on rank 0, or
     * a rank's own, ends the job at once. */
    int failed = rc && rc != NMT_ERR_INTERRUPTED, says = err.msg[0] != 0;
    if (rc == NMT_ERR_INTERRUPTED && !comm.rank) fprintf(stderr, "nmt train: %s\n", err.msg);
    if (failed && says && comm.rank) fprintf(stderr, "nmt train: error (rank %d of %d): %s\n", comm.rank, comm.size, err.msg);
    else if (failed && says) fprintf(stderr, "nmt train: error: %s\n", err.msg);
    if (mpi) comm_mpi_close(&comm, failed && (says || !comm.rank));
    return rc == NMT_ERR_INTERRUPTED ? 130 : rc ? CMD_ERR : CMD_OK;
}

int cmd_train(int argc, char **argv)
{
    nmt_train_opts o = nmt_train_default_opts();
    long log_every = 100;
    char *yaml = NULL;
    int rc = train_options(&o, &log_every, argc, argv, &yaml);
    o.options_yaml = yaml;
    if (rc == OPT_GO) rc = run_train(&o, log_every);
    free(yaml);
    return rc;
}
