/* nmt.h: the public C API of the nmt toolkit (attention-based neural machine translation:
 * RNNsearch and RNNencdec of Bahdanau et al. 2014).
 *
 *     nmt_err err;
 *     nmt_model *m;
 *     if (nmt_model_load(&m, "model.nmt", &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
 *     nmt_translate_opts o = nmt_translate_default_opts();    // beam 12, length-normalised
 *     nmt_decoder *d;
 *     nmt_decoder_init(&d, m, &o, &err);
 *     const char *src[] = {"a man is riding a bike ."};
 *     nmt_translation t[1];
 *     if (!nmt_translate(d, src, 1, t, &err)) { ... t[0].hyps[0].words ...; nmt_translation_free(t, 1); }
 *     nmt_decoder_free(d); nmt_model_free(m);
 *
 * Thread safety: a model is read-only once loaded and may be shared by many threads; each thread
 * translates with its own nmt_decoder. Every function that can fail returns an int status
 * (0 = NMT_OK, negative = enum nmt_status) and, given a non-NULL struct nmt_err, a message that
 * names the problem. A NULL where a pointer is required (an array's entry included) is
 * NMT_ERR_ARG naming the argument; functions without a status return their refusal (NULL, 0, -1,
 * "unknown"), and the _free functions accept NULL (tests/test_api_args.c holds every function
 * to this). The library never exits and never prints; logs go to nmt_set_log's callback.
 *
 * Speed: OpenBLAS chooses its kernels when it loads, and an OpenBLAS older than the CPU (Debian
 * 12's 0.3.21 on Emerald Rapids, say) falls back to SSE3 ones, several times slower; on other
 * CPUs its choice is merely not the fastest. The `nmt` program times the candidates once per CPU
 * model, oneDNN's matmul among them, and restarts itself with the fastest (nmt_blas_speed); a
 * program linking libnmt cannot be restarted by a library, so run it with OPENBLAS_CORETYPE set, or
 * NMT_GEMM=onednn where `nmt blas-kernels` shows oneDNN (read at the first product). Where
 * OpenBLAS runs kernels without AVX2 on a CPU with AVX2, the library says so once (nmt_set_log).
 * `OPENBLAS_VERBOSE=2 program` prints the kernels in use.
 */
#ifndef NMT_H
#define NMT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nmt_status {
    NMT_OK = 0,
    NMT_ERR_IO = -1,        /* a file could not be opened, read or written */
    NMT_ERR_FORMAT = -2,    /* malformed input: model file, corpus, alignment file ... */
    NMT_ERR_NOMEM = -3,     /* an allocation failed or a size overflowed */
    NMT_ERR_ARG = -4,       /* an invalid argument or option value */
    NMT_ERR_MISMATCH = -5,  /* inputs that must agree do not (line counts, shapes, config) */
    NMT_ERR_NUMERIC = -6,   /* NaN or Inf where a finite value is required */
    NMT_ERR_INTERRUPTED = -7
};

/* Error record owned by the caller; the library writes into it on failure. */
typedef struct nmt_err {
    int code;
    char msg[1024];
} nmt_err;

/* Model architectures (MODEL.md sections 2, 3 and 5). */
enum nmt_arch {
    NMT_ARCH_RNNSEARCH = 0, /* bidirectional encoder + additive attention (Bahdanau et al.) */
    NMT_ARCH_RNNENC = 1,    /* RNN encoder-decoder: forward encoder, fixed context h_Tx */
    NMT_ARCH_RECATT = 2,    /* Feng et al.: the previous context enters the attention (R_a c_{i-1}) */
    NMT_ARCH_INPUTFEED = 3, /* the previous context enters the decoder GRU (F c_{i-1}) */
    NMT_ARCH_MARKOV = 4,    /* a window of the previous attention weights enters the attention */
    NMT_ARCH_LOCFER = 5,    /* a window of the summed previous attention weights enters it */
    NMT_ARCH_FERTDEC = 6,   /* Feng et al.: a coverage vector d_i with an extract gate in the decoder */
    NMT_ARCH_RECATT_FERTDEC = 7, /* both RecAtt and FertDec */
    NMT_ARCH_TRANSFORMER = 8, /* the second family: Vaswani et al. 2017 (docs/MODEL-MAP.md) */
    NMT_ARCH_COUNT
};
/* the Transformer's deepest stack */
#define NMT_MAX_DEPTH 16
/* the recurrent architectures are the ids below this */
#define NMT_ARCH_RNN_COUNT NMT_ARCH_TRANSFORMER

/* The Transformer's feed-forward activation (nmt_config.ffn_act) */
enum nmt_act { NMT_ACT_RELU = 0, NMT_ACT_GELU = 1, NMT_ACT_SWISH = 2 };

/* The hyperparameters that fix a model's shape. Sizes of vocabularies count EOS (id 0) and
 * UNK (id 1). */
typedef struct nmt_config {
    int arch;        /* enum nmt_arch */
    int src_vocab;   /* Kx */
    int tgt_vocab;   /* Ky */
    int emb;         /* m: word embedding size */
    int hid;         /* n: GRU units (per encoder direction) */
    int att;         /* n': alignment model hidden units */
    int maxout;      /* l: maxout units of the deep output (2l before the max) */
    int window;      /* k: Markov / LocFer window half-width (2k+1 weights); 2 */
    double fert_step_w, fert_left_w; /* FertDec's step-decay and left-over cost weights; 1, 1 */
    int tied_emb;    /* 1: the target embeddings Ey [Ky, m] are also the softmax layer's weights
                        (W_o = Ey^T, one stored tensor; Marian's --tied-embeddings); needs m == l.
                        2 (Transformer): the source embeddings too, over one joint vocabulary */
    /* The Transformer (arch NMT_ARCH_TRANSFORMER; 0 for the recurrent ones). emb is d_model; hid,
     * att and maxout are not read and are set to emb. */
    int enc_depth, dec_depth; /* layers of the encoder and the decoder, 1..16 */
    int heads;                /* attention heads; emb a multiple of it */
    int ffn;                  /* the feed-forward layers' inner size */
    int ffn_act;              /* enum nmt_act */
    int post_norm;            /* 1: layer norm after each block's residual sum; 0: before each block,
                                 with a final norm on each stack (the default) */
    int max_pos;              /* learned positions: rows of each side's table; 0: sinusoidal */
    double ln_eps;            /* the layer norms' epsilon */
    /* Where alignments come from (the attention rows of translations, n-best alignments, forced
     * alignment): the encoder-decoder attention of decoder layer align_layer (1-based; 0, the
     * default: the last), head align_head (1-based; 0, the default: the mean of the heads).
     * A converted Marian model names its guided-alignment layer's head 1 (docs/OPUS-MT.md). */
    int align_layer, align_head;
    /* 1: decoding as Marian decodes a pre-norm Transformer (marian-dev src/models/transformer.h,
     * DecoderLayerSelfAttention and LayerAttention): after the first position, the decoder's
     * self-attention takes its keys and values from the stream before the block's norm, the
     * queries from after it; training and forced scoring are unchanged. 0 (default): the norm's
     * output throughout. Converted pre-norm Marian models set it, so that nmt's translations are
     * Marian's. */
    int marian_kv;
    /* 1: each decoder layer's self-attention is Marian's simpler simple recurrent unit (SSRU; Kim
     * et al. 2019, marian-dev src/rnn/cells.h): f_t = σ(a_t W_f + b_f), c_t = f_t ∘ c_{t−1} +
     * (1 − f_t) ∘ a_t W, output relu(c_t), c_{−1} = 0 (tensors dec_l{n}_ssru_W [d, 2d] = W|W_f,
     * _ssru_bf, _ssru_ln_*), for converted Marian models (nmt train has no option for it, but
     * fine-tunes such a model). 0 (default): self-attention. */
    int ssru;
} nmt_config;

/* The paper's sizes: 30002-word vocabularies, m 620, n 1000, n' 1000, l 500. */
nmt_config nmt_config_default(void);
/* A Transformer's: Vaswani et al.'s base sizes (6 + 6 layers, d 512, 8 heads, feed-forward 2048,
 * relu), pre-norm, sinusoidal positions, target embeddings tied to the output layer. */
nmt_config nmt_config_transformer(void);
/* Checks sizes and architecture; 0 or NMT_ERR_ARG with a message. */
int nmt_config_check(const nmt_config *c, nmt_err *err);
const char *nmt_arch_name(int arch);
int nmt_arch_parse(const char *name); /* -1 when unknown */

/* ------------------------------------------------------------------ models
 * A model holds its config, both vocabularies and every parameter; one file stores all of it
 * (safetensors layout: config and vocabularies in the header's __metadata__, float32 tensors
 * named as in docs/MODEL-MAP.md, openable from Python with the safetensors package). */
typedef struct nmt_model nmt_model;

/* A new model with Appendix-B initialisation from seed. src_words / tgt_words hold
 * c->src_vocab / c->tgt_vocab entries, the first two "</s>" and "<unk>", each non-empty UTF-8
 * without blanks (NMT_ERR_FORMAT naming the entry otherwise). */
int nmt_model_create(nmt_model **out, const nmt_config *c, const char *const *src_words,
                     const char *const *tgt_words, uint64_t seed, nmt_err *err);
/* Reads and validates a model (or a training checkpoint, whose optimizer state is ignored). */
int nmt_model_load(nmt_model **out, const char *path, nmt_err *err);
/* Writes atomically (temporary file, fsync, rename): a crash never leaves a partial model. */
int nmt_model_save(const nmt_model *m, const char *path, nmt_err *err);
void nmt_model_free(nmt_model *m);
/* Checkpoint averaging: a model whose every parameter is the mean over the n model files (one
 * configuration and the same vocabularies, else NMT_ERR_ARG naming what differs); the rest
 * (configuration, vocabularies, text stages) is the first file's. */
int nmt_model_average(nmt_model **out, const char *const *paths, int n, nmt_err *err);
/* A Marian Transformer (an OPUS-MT model, docs/OPUS-MT.md) as an nmt model: npz is Marian's
 * .npz (its configuration read from its special:model.yml), vocabs[0] and vocabs[1] Marian's
 * vocabulary .yml files of the source and the target (vocabs[1] NULL: one joint vocabulary),
 * spms NULL or spms[0] and spms[1] the SentencePiece models of each side, which the model then
 * applies to raw text itself (without them it reads and writes pieces as tokens, as Marian built
 * without SentencePiece). An option nmt does not read is NMT_ERR_ARG naming it; a damaged or
 * foreign file NMT_ERR_FORMAT; a vocabulary whose size is not the embeddings' rows
 * NMT_ERR_MISMATCH. */
int nmt_model_import_marian(nmt_model **out, const char *npz, const char *const vocabs[2], const char *const spms[2],
                            nmt_err *err);
const nmt_config *nmt_model_config(const nmt_model *m);
size_t nmt_model_num_params(const nmt_model *m);
/* The vocabulary of one side (enum nmt_side, below) as the model reads or writes it: its size
 * (ids 0 .. size - 1, with "</s>" 0 and "<unk>" 1; 0 for a NULL m or another side) and the entry
 * of id, a word or a subword model's SentencePiece piece (valid while m lives; NULL for a NULL m,
 * another side or an id out of range). */
int nmt_model_vocab_size(const nmt_model *m, int side);
const char *nmt_model_vocab_entry(const nmt_model *m, int side, int id);
/* 1 for a subword model (nmt train --subwords: it reads SentencePiece pieces), else 0. */
int nmt_model_has_subwords(const nmt_model *m);
/* 1 for a model that reads raw text through text stages of its own (a subword model, or a word
 * model trained with nmt train --tokenize), 0 for one that reads tokenized text (or a NULL m). */
int nmt_model_has_text_stages(const nmt_model *m);
/* The parameter tensors as the model file stores them, for programs that inspect or convert a
 * model (the Python package's load_tensors): nmt_model_num_tensors of them, in file order. Tensor
 * i's name (valid while m lives), its ndim (1 or 2) and shape[0..ndim), and, where values is not
 * NULL, its shape[0] x ... elements row-major into values as float32. NMT_ERR_ARG for i out of
 * range. */
int nmt_model_num_tensors(const nmt_model *m);
int nmt_model_tensor(const nmt_model *m, int i, const char **name, int *ndim, int64_t shape[2], float *values,
                     nmt_err *err);

/* ------------------------------------------------------------------ text pipeline
 * The one road between a language's text and a model's ids, used by training, translation,
 * scoring and alignment:
 *   encode: a line -> invalid UTF-8 bytes replaced by U+FFFD -> [lowercase.perl ->
 *           normalize-punctuation.perl ->] [tokenizer.perl] -> words -> [SentencePiece pieces]
 *           -> ids (unknown: UNK)
 *   decode: ids -> tokens -> one line (words joined by spaces, or pieces joined by
 *           SentencePiece) -> [detokenizer.perl]
 * A model trained with subword units (nmt train --subwords) carries its SentencePiece models
 * and its text stages: its pipelines read raw text and write raw text, the tokens it reads and
 * writes are pieces, and each line also tells which word each piece belongs to. A word model
 * trained on raw text (nmt train --tokenize) carries its stages too, and reads and writes raw text.
 * Words are separated by runs of the blanks " \t\n\v\f\r". The Moses stages are byte-identical
 * to the scripts (moses-smt/mosesdecoder 3a0631a) on the reference vectors. Without Moses stages
 * a line is taken as tokenized text.
 *
 *     nmt_text_opts o = nmt_text_default_opts();
 *     o.lang = NMT_LANG_EN; o.tokenize = o.lowercase = o.normalize_punct = 1;   // Multi30k's
 *     nmt_text *src;
 *     nmt_text_init_model(&src, &o, model, NMT_SOURCE, &err);
 *     nmt_text_line l;
 *     if (!nmt_text_encode(src, "A man's bike.", 13, &l, &err)) ... l.words: a man &apos;s bike .
 *
 * Thread safety: an nmt_text keeps its results in itself; give each thread its own. */
enum nmt_lang { NMT_LANG_NONE = -1, NMT_LANG_EN = 0, NMT_LANG_FR = 1, NMT_LANG_DE = 2 };
enum nmt_side { NMT_SOURCE = 0, NMT_TARGET = 1 };

typedef struct nmt_text_opts {
    int lang;            /* enum nmt_lang: the language's Moses rules; NONE (default) for none */
    int tokenize;        /* encode raw text: Moses-tokenize it (needs lang) */
    int lowercase;       /* with tokenize: lowercase.perl (Perl lc) first */
    int normalize_punct; /* with tokenize: normalize-punctuation.perl -l LANG, after lowercasing */
    int aggressive;      /* with tokenize: tokenizer.perl -a (dirt-bikes -> dirt @-@ bikes) */
    int escape;          /* with tokenize: HTML-escape & | < > ' " [ ] (default 1; 0 = -no-escape) */
    int detokenize;      /* decode to raw text: detokenizer.perl -l LANG (needs lang) */
} nmt_text_opts;

nmt_text_opts nmt_text_default_opts(void);

typedef struct nmt_text nmt_text;

/* A pipeline whose ids index words[0..n_words) (copied; the first two "</s>" and "<unk>"), or
 * with no vocabulary when words is NULL: encode then gives words and no ids. */
int nmt_text_init(nmt_text **out, const nmt_text_opts *o, const char *const *words, int n_words, nmt_err *err);
/* A pipeline over the source or target (enum nmt_side) vocabulary of m, which must outlive it.
 * A word model of text tokenized outside (nmt train without --tokenize) stores no text settings:
 * the stages come from o. A word model trained on raw text (nmt train --tokenize) stores its
 * stages and applies them, detokenizing on the target side: o must ask for none or for the same
 * (NMT_ERR_ARG otherwise). A subword model's stages are its own: o must ask for none. */
int nmt_text_init_model(nmt_text **out, const nmt_text_opts *o, const nmt_model *m, int side, nmt_err *err);
void nmt_text_free(nmt_text *t);

/* One encoded (or decoded) line; every pointer is into the nmt_text (or the model) and valid
 * until its next call. The model's tokens are words, or a subword model's pieces. */
typedef struct nmt_text_line {
    const char *text;    /* encoding: the tokens as the model reads them, separated by spaces (the
                            tokenized line; a subword model's pieces); decoding: the output text */
    size_t len;
    int n_words;         /* tokens */
    const char *const *words;
    const int *ids;      /* [n_words]; NULL without a vocabulary */
    int n_unk;           /* tokens mapped to UNK */
    int n_invalid;       /* invalid UTF-8 bytes of the input, each replaced by U+FFFD */
    int n_text_words;    /* the words a user sees: the line after the text stages split at blanks */
    const char *const *text_words;
    const int *word_of;  /* [n_words]: the text word each token belongs to (-1: none); k for words */
} nmt_text_line;

/* Encodes line[0..len) (one line: a final "\n" is dropped; a NUL byte ends it), which must not
 * point into t's own results. */
int nmt_text_encode(nmt_text *t, const char *line, size_t len, nmt_text_line *out, nmt_err *err);
/* For a pipeline that tokenizes: the first mark of Moses-tokenized text in line[0..len) ("&apos;",
 * "&quot;", " @-@ "), which tokenizing again would escape into words the model never saw; NULL
 * when there is none or t does not tokenize. For a warning: raw text rarely holds them. */
const char *nmt_text_looks_tokenized(const nmt_text *t, const char *line, size_t len);
/* Decodes ids[0..n) (no EOS) into *text (NUL-terminated, *len bytes; valid until the next call). */
int nmt_text_decode(nmt_text *t, const int *ids, int n, const char **text, size_t *len, nmt_err *err);
/* Decodes words (say, a hypothesis whose UNKs were replaced by source words) the same way. */
int nmt_text_decode_words(nmt_text *t, const char *const *words, int n, const char **text, size_t *len,
                          nmt_err *err);
/* The same, with the words of the output (before detokenizing) and the word of each token in
 * *out, for alignments and heat maps in words. */
int nmt_text_decode_line(nmt_text *t, const char *const *words, int n, nmt_text_line *out, nmt_err *err);

/* Which word each token of a sentence belongs to (nmt_text_line's word_of, n_text_words). */
typedef struct nmt_word_map {
    int n_tokens;        /* tokens mapped (a source cut at NMT_MAX_SRC_WORDS: the ones read) */
    const int *word_of;  /* [n_tokens]: a word index, or -1 (the token's weight is dropped) */
    int n_words;
} nmt_word_map;

/* Attention over tokens merged into attention over words (docs/SUBWORDS.md): att has one row
 * per target token (tgt->n_tokens), then one for the EOS when eos_row is 1, and one column per
 * source token (src->n_tokens) then the source EOS. out, [(tgt->n_words + eos_row) x
 * (src->n_words + 1)], gets in each row for each source word the sum of its tokens' weights, and
 * for each target word the sum of its tokens' rows divided by their number (rows stay
 * distributions); the EOS row and column stay their own. Word models merge with identity maps,
 * which copies. NMT_ERR_ARG for a word index out of range. */
int nmt_attention_to_words(float *out, const float *att, int eos_row, const nmt_word_map *tgt, const nmt_word_map *src,
                           nmt_err *err);

/* ------------------------------------------------------------------ translation
 * Thread safety: a loaded nmt_model is read-only and may be shared by any number of threads;
 * each thread decodes with its own nmt_decoder. Sentences are tokenized text (words separated
 * by spaces); unknown words map to UNK. A subword model reads its pieces: give it the text of
 * nmt_text_encode on its own pipeline (and its hypotheses' words are pieces, which
 * nmt_text_decode_words joins into text). Lengths count the model's tokens. */
#define NMT_MAX_SRC_WORDS 400   /* longer inputs are cut to this many words (reported) */
#define NMT_MAX_TGT_WORDS 1200  /* nmt_score / nmt_force_align: a longer target is an error */

/* A lexical table for UNK replacement (built by `nmt lex`: TSV source, target, counts). */
typedef struct nmt_lexicon nmt_lexicon;
int nmt_lexicon_load(nmt_lexicon **out, const char *path, nmt_err *err);
void nmt_lexicon_free(nmt_lexicon *lx);

/* A lexical shortlist for decoding (Marian's --shortlist): for each batch of sentences the
 * output layer computes only the union of the K best translations of the batch's source words,
 * the F most frequent target words (the target vocabulary's ids 2 .. F+1, which a word model
 * orders by frequency), EOS and UNK, and the softmax is taken over that set. Read from a TSV
 * table "source<TAB>target[<TAB>count<TAB>source count]" (`nmt lex --top K`), any number of
 * lines per source word, ranked by count (ties: file order); words the model does not know are
 * skipped. NMT_ERR_FORMAT naming file:line for a malformed line, NMT_ERR_ARG for K or F < 0.
 * Read-only once loaded: decoders may share one; it must outlive them. */
typedef struct nmt_shortlist nmt_shortlist;
int nmt_shortlist_load(nmt_shortlist **out, const char *path, const nmt_model *m, int k, int f, nmt_err *err);
void nmt_shortlist_free(nmt_shortlist *sl);

/* The arithmetic of a decoder step's matrix products (the output layer, the GRU's, the
 * attention's W_a, the deep output's): FP32 (the reference), or the weights converted once when
 * the decoder is made, to int8 (one scale per output unit; AVX2) or bf16 (AVX512_BF16);
 * the activations are converted at each step; the encoder, the softmaxes and the search stay
 * FP32. A precision the CPU lacks is refused (NMT_ERR_ARG) by nmt_decoder_init. Training takes
 * FP32 or BF16 (nmt_train_opts.precision). */
enum nmt_precision { NMT_PREC_FP32, NMT_PREC_INT8, NMT_PREC_BF16 };
/* 1 when precision p runs on this CPU and build */
int nmt_precision_supported(int p);

typedef struct nmt_translate_opts {
    int beam;            /* beam size, default 12; 1 = greedy decoding */
    int normalize;       /* default 1: rank by log-probability / length^length_alpha (EOS counted); 0: raw */
    double max_ratio;    /* default 3: at most max_ratio × (source words + 1) output tokens */
    int no_unk;          /* never generate UNK */
    int n_best;          /* hypotheses returned per sentence (default 1, at most beam; with
                            sample the draws, at most 1000) */
    int attention;       /* keep attention matrices */
    int batch;           /* sentences decoded together (default 64), fewer when their hypotheses'
                          * softmax outputs would pass 64 MiB (a 30,000-word vocabulary at beam 12:
                          * 46); with batch_invariant (default) nothing depends on it but the
                          * speed; without, scores in their last digits (about 1e-6) */
    int unk_replace;     /* replace each output UNK by the lexicon's translation of the most-attended
                            source word, or by that word itself (RNNsearch-family models only) */
    const nmt_lexicon *lexicon; /* for unk_replace; NULL = always copy the source word */
    int precision;       /* enum nmt_precision, default NMT_PREC_FP32 (nmt_score keeps FP32) */
    const nmt_shortlist *shortlist; /* NULL (default): the whole target vocabulary */
    double length_alpha; /* with normalize: rank by log-probability / length^length_alpha, in
                            [0, 10] (default 1: the length itself; Marian's --normalize ALPHA,
                            Sockeye's --length-penalty-alpha with beta 0) */
    /* Sampling instead of search (the back-translation of Edunov et al. 2018; Marian's
     * --output-sampling, fairseq's --sampling): each sentence draws n_best translations word by
     * word from the model's distribution, independently (they may repeat), returned best score
     * first; beam is not used. A draw's random numbers are keyed by seed and the sentence's
     * source words only (not its place in the input), so the same lines in the same batches draw
     * the same, and with batch_invariant (default) identical lines draw identically in any
     * batch. Without it the model's probabilities for a row may differ in their last bits by the
     * row's place (OpenBLAS's AVX2 kernels round a product's rows apart), and a draw that this
     * moves goes otherwise. */
    int sample;          /* 1: sample; 0 (default): beam search */
    int sample_topk;     /* with sample: draw among the k most probable words only (0, default: all) */
    double temperature;  /* with sample: draw from p^(1/temperature), in [0.001, 100] (default 1) */
    uint64_t seed;       /* with sample: default 1 (nmt translate and serve take [0, 2^53]) */
    double sample_topp;  /* with sample: nucleus sampling (Holtzman et al. 2020; fairseq's
                            --sampling-topp): draw among the fewest most probable words whose
                            probabilities (tempered, after sample_topk) sum to at least
                            sample_topp, words of equal probability kept together; in (0, 1]
                            (default 1: all) */
    int max_len;         /* at most this many output tokens, EOS counted (a prefix's tokens too), as
                            well as max_ratio's limit; 0 (default): max_ratio's alone. In [0, 100000]:
                            CTranslate2's max_decoding_length */
    /* Asked before each batch of nmt_translate(_hints) and nmt_force_align with stop_user (NULL,
     * default: never): a non-zero answer ends the
     * call with NMT_ERR_INTERRUPTED and no translation (a caller's Ctrl-C, a deadline). A batch
     * runs to its end first: nmt_translate of a long input stops within one batch's time. */
    int (*stop)(void *stop_user);
    void *stop_user;
    /* 1 (default): a sentence's tokens, scores and attention do not depend on the other sentences
     * of its batch, the batch size or the thread count (FP32 and int8; not with a shortlist, whose
     * words are its batch's): every FP32 product's rows are computed alone (docs/CLI.md, "A
     * sentence's translation does not depend on its batch"). 0: the BLAS's products, faster on
     * AVX-512 CPUs (on costs 1.16x at beam 12, 1.44x at beam 1 against oneDNN there; off is slower than
     * nmt's own on AVX2-only CPUs), whose last bits depend on the rows beside a row. */
    int batch_invariant;
} nmt_translate_opts;

nmt_translate_opts nmt_translate_default_opts(void);

typedef struct nmt_hypothesis {
    int n_words;          /* output words, EOS not included */
    const char **words;   /* point into the model's vocabulary: valid while the model lives */
    int *ids;
    double logprob;       /* log p of the words and, if finished, the EOS */
    double score;         /* the ranking score: logprob, or logprob / (n_words + finished)^length_alpha */
    int finished;         /* ended with EOS (else cut at the length limit) */
    int attn_rows;        /* n_words + finished: one row per output token, EOS included */
    int attn_cols;        /* source words + 1 (the source EOS) */
    float *attention;     /* [attn_rows][attn_cols] (RNNsearch only; NULL otherwise or if not asked) */
    int n_replaced;       /* UNKs replaced (unk_replace); their words point into pool */
    char *pool;
} nmt_hypothesis;

typedef struct nmt_translation {
    int n_src;            /* source words used (after truncation) */
    int truncated;        /* the source had more than NMT_MAX_SRC_WORDS words */
    int n_unk;            /* source words unknown to the model */
    int n_hyps;           /* 0 for an empty sentence */
    nmt_hypothesis *hyps; /* best first */
} nmt_translation;

typedef struct nmt_decoder nmt_decoder;

int nmt_decoder_init(nmt_decoder **out, const nmt_model *m, const nmt_translate_opts *o, nmt_err *err);
/* An ensemble of models[0..n) (each must outlive the decoder), as Marian's, OpenNMT-py's and
 * Nematus's: at every step the score of a next word is Σ_k w_k log p_k(word), with w_k =
 * weights[k] / Σ weights (weights NULL: 1/n each; else n positive numbers with a finite sum),
 * not renormalised; beam search runs on it and each model keeps its own recurrent state, so architectures may
 * differ. Hypotheses' logprob is that score summed over the output; their attention is the mean
 * of the attention of the models that have attention (NULL when none has). nmt_score and
 * nmt_force_align on such a decoder give Σ_k w_k log p_k(tgt | src) and that mean attention.
 * The models must read and write the same tokens (nmt_model_check_vocab: NMT_ERR_ARG naming the
 * models "model 1", "model K"). An ensemble of one model is nmt_decoder_init's decoder. */
int nmt_decoder_init_ensemble(nmt_decoder **out, const nmt_model *const *models, const double *weights, int n,
                              const nmt_translate_opts *o, nmt_err *err);
/* 0 when b reads and writes the same tokens as a: the same source and target vocabularies (id
 * for id) and, for subword models, the same SentencePiece models and text stages; else
 * NMT_ERR_ARG with a message naming the first difference, the models called name_a and name_b
 * (say their files): "b.nmt: target vocabulary differs from a.nmt's at id 1234 (...)". */
int nmt_model_check_vocab(const nmt_model *a, const char *name_a, const nmt_model *b, const char *name_b,
                          nmt_err *err);
void nmt_decoder_free(nmt_decoder *d);
/* Changes the options of d (checked as nmt_decoder_init does; d unchanged on error); its
 * workspace is kept, so a server can decode each batch with its own beam without a new decoder. */
int nmt_decoder_set_opts(nmt_decoder *d, const nmt_translate_opts *o, nmt_err *err);
/* Translates sentences[0..n) into out[0..n) (free with nmt_translation_free); n < 0 is
 * NMT_ERR_ARG (n == 0 does nothing). A sentence whose scores are not finite (a model whose
 * weights overflow its products) is NMT_ERR_NUMERIC naming it, never a hypothesis; nmt_score
 * and nmt_force_align say so of a pair likewise. */
int nmt_translate(nmt_decoder *d, const char *const *sentences, int n, nmt_translation *out, nmt_err *err);
/* What one sentence's translations must hold (docs/CLI.md, "Prefixes and constraints"), in the
 * model's target tokens (words, or a subword model's pieces) separated by blanks. prefix: the
 * translation begins with it (forced token by token, then searched on; its log-probability is in
 * the hypothesis's, as nmt_score counts it); NULL or "" for none. phrases[0..n_phrases): each must
 * appear in the translation, in any order (lexically constrained decoding by dynamic beam
 * allocation, Post & Vilar 2018: the beam's slots are shared among the hypotheses by how many
 * constraint tokens they hold, and the EOS is refused until every phrase is there; at the length
 * limit a hypothesis without them all is returned after those with them). */
#define NMT_MAX_PHRASES 64
typedef struct nmt_hint {
    const char *prefix;
    const char *const *phrases;
    int n_phrases;        /* 0 .. NMT_MAX_PHRASES */
} nmt_hint;
/* nmt_translate with hints[i] for sentences[i] (a hint with no prefix and no phrase changes
 * nothing: the same translation, bit for bit). NMT_ERR_ARG, naming the sentence, for a token the
 * target vocabulary lacks (or </s>, <unk>), an empty or NULL phrase, more than NMT_MAX_PHRASES,
 * hints whose tokens do not fit the sentence's length limit (max_ratio), and for hints with
 * sampling or a shortlist. An empty sentence gives no hypothesis, whatever its hints. */
int nmt_translate_hints(nmt_decoder *d, const char *const *sentences, const nmt_hint *hints, int n,
                        nmt_translation *out, nmt_err *err);
void nmt_translation_free(nmt_translation *t, int n);
/* The entry the string functions above reach: sources and hints as token ids, as a text
 * pipeline's nmt_text_encode gives them (nmt_text_line.ids), so that text is split and looked up
 * once. A source's tokens past NMT_MAX_SRC_WORDS are cut (truncated set); its tokens string, when
 * given, is what UNK replacement copies a source token from (NULL: the vocabulary's word, which
 * for an UNK is "<unk>"). */
typedef struct nmt_source {
    const int *ids;      /* [n_ids] source vocabulary ids, no EOS */
    int n_ids;
    const char *tokens;  /* the same tokens as text separated by blanks, or NULL */
} nmt_source;
/* One sentence's hints as target vocabulary ids (neither </s> nor <unk>): the prefix, and phrase
 * c as tokens[offsets[c] .. offsets[c + 1]) (each non-empty; offsets[0] = 0). */
typedef struct nmt_hint_ids {
    const int *prefix;
    int n_prefix;
    const int *tokens;
    const int *offsets;   /* [n_phrases + 1] */
    int n_phrases;        /* 0 .. NMT_MAX_PHRASES */
} nmt_hint_ids;
/* nmt_translate_hints on ids: hints NULL for none, else hints[i] for src[i]. NMT_ERR_ARG, naming
 * the sentence, for an id outside its vocabulary and as nmt_translate_hints for the hints. */
int nmt_translate_ids(nmt_decoder *d, const nmt_source *src, const nmt_hint_ids *hints, int n, nmt_translation *out,
                      nmt_err *err);
/* ------------------------------------------------------------------ translators and workers
 * What `nmt translate`, `nmt serve` and the Python package translate text with. A translator holds
 * one model or an ensemble (models[0..n), weights as nmt_decoder_init_ensemble's; they must
 * outlive it), the options fixed for its life (o's precision, shortlist, lexicon and
 * batch_invariant: every worker of a model reads the same converted weights) and the text stages
 * asked for on each side (as nmt_text_init_model's o; NULL: the model's own). It lends workers: a
 * worker is a decoder with the model's source pipeline (input text to ids), its target pipeline
 * (output tokens to text) and a pipeline for prefixes and constraint phrases (target text with the
 * model's own stages only, as the output reads before the asked-for ones). A worker belongs to
 * the thread that took it until it is given back; take and give may be called from any thread,
 * and idle workers are kept for the next taker. The first worker is made by nmt_translator_init,
 * so that options, precision and stages are refused there. */
typedef struct nmt_translator nmt_translator;
typedef struct nmt_worker nmt_worker;
int nmt_translator_init(nmt_translator **out, const nmt_model *const *models, const double *weights, int n,
                        const nmt_translate_opts *o, const nmt_text_opts *src, const nmt_text_opts *tgt, nmt_err *err);
/* Frees the translator and its idle workers (every worker must have been given back). */
void nmt_translator_free(nmt_translator *t);
/* An idle worker (or a new one) with the search options o (NULL: the translator's; the fixed
 * fields are the translator's whatever o says); an error leaves every worker as it was. */
int nmt_worker_take(nmt_translator *t, const nmt_translate_opts *o, nmt_worker **out, nmt_err *err);
void nmt_worker_give(nmt_worker *w);
/* the worker's decoder (for nmt_translate on tokens, nmt_score, nmt_force_align) and its source
 * or target (output) pipeline */
nmt_decoder *nmt_worker_decoder(nmt_worker *w);
nmt_text *nmt_worker_text(nmt_worker *w, int side);

/* One source line as a worker read it, with its hints: its own copy, valid until
 * nmt_sentence_free (and zeroed by it). */
typedef struct nmt_sentence {
    nmt_source src;      /* the tokens as ids and as text (all of them: the search cuts at
                            NMT_MAX_SRC_WORDS and says so in the translation) */
    nmt_hint_ids hint;   /* the prefix and phrases added so far (none at first) */
    nmt_word_map map;    /* the word of the text each token belongs to */
    int n_unk;           /* tokens the model does not know */
    int n_invalid;       /* invalid UTF-8 bytes replaced by U+FFFD */
    const char *words;   /* the text's words after the text stages, separated by spaces */
    /* the worker's own */
    void *mem_;
    int *hint_mem_, hint_cap_;
    int off_[NMT_MAX_PHRASES + 1];
} nmt_sentence;
/* line[0..len) through the worker's source pipeline into *s (free with nmt_sentence_free). */
int nmt_worker_encode(nmt_worker *w, const char *line, size_t len, nmt_sentence *s, nmt_err *err);
/* The same through any pipeline with a vocabulary (a worker's source side, nmt_worker_text). */
int nmt_sentence_encode(nmt_text *t, const char *line, size_t len, nmt_sentence *s, nmt_err *err);
/* Target text through the hint pipeline into s's hints: the prefix (once, before any phrase; ""
 * for none) and the phrases in turn. NMT_ERR_ARG, naming "the prefix" or "constraint K" (from 1),
 * for a token the target vocabulary lacks or that cannot be asked for (</s>, <unk>), an empty
 * phrase, more than NMT_MAX_PHRASES; s keeps what it had. */
int nmt_worker_prefix(nmt_worker *w, nmt_sentence *s, const char *text, nmt_err *err);
int nmt_worker_phrase(nmt_worker *w, nmt_sentence *s, const char *text, nmt_err *err);
/* nmt_translate_ids of the sentences s[0..n) with their hints. */
int nmt_worker_translate(nmt_worker *w, const nmt_sentence *s, int n, nmt_translation *out, nmt_err *err);
void nmt_sentence_free(nmt_sentence *s);

/* ------------------------------------------------------------------ several workers at once
 * Batches of sentences translated by `workers` threads, each with a worker of the translator and
 * `threads` OpenMP threads for its products (0 or less: all cores), handed back in the order
 * they were put: what `nmt translate --workers N` runs, Marian's --cpu-threads and CTranslate2's
 * inter_threads. Each batch is translated as nmt_worker_translate translates it, so the answers
 * are those of one worker. At most 2 x workers batches are in flight; the caller puts and gets
 * from one thread. */
#define NMT_MAX_WORKERS 256
typedef struct nmt_pipeline nmt_pipeline;
int nmt_pipeline_init(nmt_pipeline **out, nmt_translator *t, int workers, int threads, nmt_err *err);
/* Queues s[0..n) to be translated into out[0..n); both stay the caller's, untouched by it, until
 * nmt_pipeline_get hands them back. NMT_ERR_ARG when 2 x workers batches are in flight already. */
int nmt_pipeline_put(nmt_pipeline *p, const nmt_sentence *s, int n, nmt_translation *out, nmt_err *err);
/* Whether a put now would be refused; how many batches are in flight (NULL: refused, none). */
int nmt_pipeline_full(nmt_pipeline *p);
int nmt_pipeline_pending(nmt_pipeline *p);
/* Waits for the oldest batch in flight: its out in *out and nmt_worker_translate's result (err
 * with it). NMT_ERR_ARG when no batch is in flight. */
int nmt_pipeline_get(nmt_pipeline *p, nmt_translation **out, nmt_err *err);
/* Translates what is still queued, stops the threads, gives the workers back. */
void nmt_pipeline_free(nmt_pipeline *p);

/* Hard alignment from a hypothesis's attention: the source word (0-based) that output word i
 * attends to most, the source EOS never chosen, ties to the lower index; -1 when h has no
 * attention or the source no word. Pharaoh "j-i" pairs are (nmt_hard_link(h, i), i). */
int nmt_hard_link(const nmt_hypothesis *h, int i);
/* Forced decoding: logprob[i] = log p(tgt_i + EOS | src_i), n_tokens[i] = its length with EOS
 * (n_tokens may be NULL).
 * A target of more than NMT_MAX_TGT_WORDS words, or n < 0, is NMT_ERR_ARG (never cut quietly). */
int nmt_score(nmt_decoder *d, const char *const *src, const char *const *tgt, int n, double *logprob,
              int *n_tokens, nmt_err *err);
/* Forced decoding with the attention kept: the model reads src_i and is made to produce tgt_i.
 * attention is [(n_tgt + 1) x (n_src + 1)]: one row per target token (its EOS last), one column
 * per source word and the source EOS; NULL for RNNencdec. Free with nmt_alignment_free. */
typedef struct nmt_alignment {
    int n_src, n_tgt;     /* words, EOS not counted (the source cut at NMT_MAX_SRC_WORDS) */
    double logprob;       /* log p(tgt + EOS | src) */
    float *attention;
    double *token_logprob; /* [n_tgt + 1]: log p of each target token, the EOS last (an ensemble's:
                              Σ_k w_k log p_k); they sum to logprob up to rounding */
} nmt_alignment;

int nmt_force_align(nmt_decoder *d, const char *const *src, const char *const *tgt, int n, nmt_alignment *out,
                    nmt_err *err);
void nmt_alignment_free(nmt_alignment *a, int n);

/* Threads for matrix products and batch loops (0 or less = all cores; more than NMT_MAX_THREADS
 * = NMT_MAX_THREADS: OpenMP fails on counts far past it, and the library never exits). */
#define NMT_MAX_THREADS 1024
void nmt_set_threads(int n);

/* The device of the models created or loaded from now on: "cpu" (the default), "devsim" (the
 * simulated device: the CPU's kernels on memory the host cannot touch, every kernel's arguments
 * checked; for testing that nothing reads model memory behind the backend's back) or
 * "cuda[:N]" where built with it. The environment variable NMT_DEVICE names one when the library
 * loads. Each model keeps the device it was made on, with its own compute context, so that
 * models on different devices live side by side in one process (one ensemble's models share
 * one). NMT_ERR_ARG, naming the devices this build has, for a name it does not have. */
int nmt_set_device(const char *name, nmt_err *err);
/* the name of the device new models get */
const char *nmt_device(void);
/* the name of the device model m lives on (NULL for NULL) */
const char *nmt_model_device(const nmt_model *m);

/* The speed of the matrix products this process runs (the BLAS kernels it loaded) on the model's
 * own shapes: SMALL's and PAPER's recurrent steps, input projections and output layers, forward
 * and backward, and beam search's output layer, each timed on one thread for seconds / 11 (at
 * least one call, the fastest kept). *gflops: their geometric mean, GFLOP/s. For a program that
 * chooses OpenBLAS's kernels by measurement, one child process per candidate (the `nmt` program
 * does: docs/CLI.md, "The FP32 products' kernels"). NMT_ERR_ARG for seconds outside [0, 60]. */
int nmt_blas_speed(double seconds, double *gflops, nmt_err *err);

/* ------------------------------------------------------------------ training
 * MODEL.md section 4 (Appendix B): Adadelta (ρ 0.95, ε 1e-6), clipping at norm 1, minibatches
 * of 80 from 1600-pair blocks sorted by length, the corpus shuffled once. */
/* Initialisation of a new model's parameters: Appendix B's (orthogonal recurrent weights, N(0, 0.01²)
 * others, the attention's W_a and U_a N(0, 0.001²) and v_a zero), or Glorot-uniform for the
 * attention's weights alone or for every weight matrix (biases zero in all three). */
enum nmt_init { NMT_INIT_PAPER, NMT_INIT_GLOROT_ATT, NMT_INIT_GLOROT };
/* Guided alignment's cost per linked target word i (a_i: its links normalised to sum to 1):
 * CE -Σ_j a_ij log(α_ij + 1e-6); MSE Σ_j (α_ij - a_ij)² over the real source positions. */
enum nmt_guided_cost { NMT_GUIDED_CE, NMT_GUIDED_MSE };

/* Validation by the quality of translations (nmt_train_opts.valid_metrics): the dev set is
 * translated by beam search and scored against its references. BLEU and chrF live in
 * libnmt-eval, which the core does not link: the program passes nmt_metric_score, or a scorer
 * of its own, as nmt_train_opts.valid_scorer. */
enum nmt_metric { NMT_METRIC_PPL, NMT_METRIC_BLEU, NMT_METRIC_CHRF };
#define NMT_MAX_VALID_METRICS 3
#define NMT_MAX_KEEP_BEST 100
/* A corpus score of hyps[0..n) against refs[0..n) (one reference each), higher is better. */
typedef int (*nmt_scorer_fn)(int metric, const char *const *hyps, const char *const *refs, int n, double *score,
                             nmt_err *err);
/* libnmt-eval's scorer: corpus BLEU as sacreBLEU's defaults compute it (13a tokenizer,
 * case-sensitive, exp smoothing) or chrF2 (sacreBLEU's CHRF()), 0..100; NMT_ERR_ARG for
 * NMT_METRIC_PPL, NMT_ERR_FORMAT for invalid UTF-8. */
int nmt_metric_score(int metric, const char *const *hyps, const char *const *refs, int n, double *score, nmt_err *err);
/* Corpus BLEU as sacreBLEU's BLEU(tokenize=..., lowercase=...) computes it, with exp smoothing,
 * against n_refs reference sets: refs[r][i] is segment i's reference in set r (NULL entries are
 * skipped: a segment with fewer references, as sacreBLEU drops a None reference; a segment whose
 * every entry is NULL is NMT_ERR_ARG, as sacreBLEU refuses it; an empty string is a reference of
 * no words, which sacreBLEU would drop too). The fields are sacreBLEU's BLEUScore's. tokenize:
 * "13a" (NULL: sacreBLEU's default), "intl" or "none"; NMT_ERR_ARG for another, NMT_ERR_FORMAT
 * for invalid UTF-8. In libnmt-eval. */
typedef struct nmt_bleu_result {
    double score;         /* 0..100 */
    double counts[4], totals[4], precisions[4]; /* clipped n-gram matches, n-grams, percent */
    double bp;            /* brevity penalty */
    int64_t sys_len, ref_len;
} nmt_bleu_result;
int nmt_bleu_corpus(const char *const *hyps, const char *const *const *refs, int n_refs, int n, const char *tokenize,
                    int lowercase, nmt_bleu_result *out, nmt_err *err);
/* Corpus chrF2 as sacreBLEU's CHRF(lowercase=...) computes it (0..100), references as above. */
int nmt_chrf_corpus(const char *const *hyps, const char *const *const *refs, int n_refs, int n, int lowercase,
                    double *score, nmt_err *err);
/* "ppl", "bleu" or "chrf" into enum nmt_metric; -1 for another name. */
int nmt_metric_parse(const char *name);
const char *nmt_metric_name(int metric);

typedef struct nmt_train_opts {
    const char *src, *tgt;              /* training corpus, one tokenized sentence per line */
    const char *valid_src, *valid_tgt;  /* dev set (optional) */
    const char *model;                  /* best model (by dev NLL) goes here */
    const char *checkpoint;             /* latest state; default MODEL.ckpt */
    const char *resume;                 /* continue from this checkpoint: its optimizer, learning rate,
                                           clipping, dropout, decay and batching (and the settings at the
                                           end of this struct) replace the ones here */
    const char *pretrained;             /* fine-tuning: start from this model (or checkpoint): its
                                           architecture, sizes, vocabularies, text stages and weights,
                                           with a fresh optimizer, schedule and counters (Marian's
                                           --pretrained-model); read at the start only, not on resume */
    const char *log_tsv;                /* Table-2 style log; default MODEL.log.tsv */
    nmt_config cfg;                     /* architecture and sizes; vocab sizes = shortlist K */
    int max_len;                        /* length filter in words (0 = none); 50 */
    int batch, sort_blocks;             /* 80, 20 */
    int reshuffle;                      /* reshuffle every epoch (the reference's order) */
    int optimizer;                      /* 0 adadelta, 1 adagrad, 2 adam, 3 sgd */
    double lr;                          /* <= 0: the optimizer's default */
    double clip;                        /* 1 */
    double dropout;                     /* on the maxout output (Feng et al. use 0.5); 0 */
    double lr_decay;                    /* multiply the learning rate by this after each validation
                                           that does not improve the dev NLL; 0 = never */
    uint64_t seed;
    int threads;                        /* 0: leave as is; at most NMT_MAX_THREADS are used */
    long max_updates;                   /* 0 = no limit */
    int max_epochs;                     /* 0 = no limit */
    double max_time;                    /* seconds, 0 = no limit */
    long valid_every;                   /* updates; 0 = at the end of each epoch. A run stopped by a limit
                                           between two validations checkpoints, then validates once more:
                                           that one reports and saves the model if it is the best, and
                                           changes nothing a resumed run reads (rate, patience, kept ones) */
    long save_every;                    /* updates between checkpoints; 0 = at validations only */
    int patience;                       /* stop after this many validations without improvement; 0 = never */
    int max_nonfinite;                  /* consecutive NaN/Inf updates tolerated */
    double max_memory;                  /* bytes; refuse larger configurations (0 = available RAM) */
    int tokenize_src, tokenize_tgt;     /* -1, or a language (0 en, 1 fr, 2 de): Moses-tokenize raw text */
    int tok_lowercase, tok_normalize;   /* lowercase / normalize punctuation first: with tokenizing, or
                                           with subwords and lang_src / lang_tgt */
    int lang_src, lang_tgt;             /* -1, or the sides' languages when not tokenizing (subwords) */
    int subwords;                       /* 0: words; 1 unigram, 2 BPE: SentencePiece units trained on the
                                           training corpus (after its text stages), stored in the model */
    int subword_vocab;                  /* pieces per SentencePiece model, EOS and UNK counted; 8000 */
    int subword_joint;                  /* one SentencePiece model for both sides */
    const char *spm_src, *spm_tgt;      /* existing SentencePiece models instead of training them;
                                           spm_tgt NULL: spm_src is a joint model */
    const char *batch_log;              /* if set, each update's pairs as 1-based corpus line numbers,
                                           one line per update, to replay the exact data order elsewhere;
                                           on resume it is cut back to the checkpoint's update */
    volatile int *stop;                 /* set non-zero (e.g. from a signal handler) to checkpoint and stop */
    int init;                           /* enum nmt_init: how new parameters are drawn (NMT_INIT_PAPER) */
    const char *options_yaml;           /* if set, the options as the program read them (YAML); checkpoints
                                           keep it under the metadata key "options", to show how a run began */
    int valid_metrics[NMT_MAX_VALID_METRICS]; /* enum nmt_metric: what a validation measures beside the dev
                                           NLL; the first decides the best model, the learning-rate decay and
                                           early stopping (n_valid_metrics 0: perplexity, as [PPL]) */
    int n_valid_metrics;
    int valid_beam;                     /* beam size of BLEU/chrF validation, length-normalised (12) */
    nmt_scorer_fn valid_scorer;         /* scores BLEU/chrF validations (nmt_metric_score); required for them */
    const char *valid_output;           /* if set, each validation's dev translations (valid_beam; one line per
                                           dev line, empty for a pair skipped as empty) are written here, {U}
                                           and {E} replaced by the update and epoch (Marian's
                                           --valid-translation-output) */
    int keep_best;                      /* keep the K best models by the first metric as MODEL's name with
                                           .uUPDATE before its extension, listed best first in MODEL.best.tsv
                                           (0 = none; at most NMT_MAX_KEEP_BEST); for nmt_model_average */
    /* What Marian, OpenNMT-py and Sockeye users expect (docs/TRAINING.md); 0 = off, and with all of
     * them off training is what it was without them, bit for bit. A resumed run keeps its checkpoint's. */
    double label_smoothing;             /* ε in [0, 1): the training loss per target token is (1-ε)(-log p(y))
                                           + ε (1/Ky) Σ_k -log p(k); the dev NLL stays the plain one */
    double dropout_emb;                 /* variational dropout (one mask per sentence, the same at every
                                           position) on the source and target embeddings */
    double dropout_rnn;                 /* ... on the state each GRU's recurrent products read (encoder and
                                           decoder; Gal and Ghahramani 2016) */
    nmt_config tf;                      /* --arch transformer's sizes (nmt_config_transformer()'s by
                                           default): the model's when cfg.arch is NMT_ARCH_TRANSFORMER,
                                           with cfg's vocabulary sizes and tied_emb */
    double dropout_tf;                  /* a Transformer's: on every block's output and the embeddings
                                           (Marian's --transformer-dropout) */
    double dropout_attn;                /* ... on the attention weights (--transformer-dropout-attention) */
    double dropout_ffn;                 /* ... inside the feed-forward (--transformer-dropout-ffn) */
    long lr_warmup;                     /* N: update u uses lr · u/N while u < N (Marian's --lr-warmup) */
    long lr_decay_inv_sqrt;             /* N: update u > N uses lr · sqrt(N/u) (--lr-decay-inv-sqrt); both
                                           multiply the rate lr_decay leaves */
    int precision;                      /* enum nmt_precision of the training step's matrix products:
                                           NMT_PREC_FP32 (default), or NMT_PREC_BF16: bf16 operands with FP32
                                           sums, FP32 master weights, gradients and optimizer (docs/TRAINING.md;
                                           AVX512_BF16, refused with NMT_ERR_ARG where the CPU lacks it); the
                                           dev set is scored in FP32 */
    const char *cost_log;               /* if set, each update's cost (summed NLL / sentences, all 17 digits)
                                           and gradient norm, one line per update; cut back on resume */
    const struct nmt_comm *comm;        /* NULL: one process; else this rank of a data-parallel job (below) */
    int overwrite;                      /* 1: start over where the model or its checkpoint exist (an earlier
                                           run's), replacing them at the first save (said as a WARN); 0
                                           (default): such a run is refused with NMT_ERR_ARG naming them,
                                           unless it resumes (resume, which excludes overwrite) */
    /* Guided alignment (Chen et al. 2016; docs/TRAINING.md): word links pull the attention of the
     * target words they link towards their source words. Training only; attention models only. */
    const char *guided_alignment;       /* if set, Pharaoh links "i-j" (source word i, target word j, from
                                           0), one line per corpus line (empty: none); NULL: off, and
                                           training is what it was without it, bit for bit */
    double guided_weight;               /* λ: the loss per sentence adds λ Σ_i G_i over its linked target
                                           words; negative (the default): the family's, 0.1 for the
                                           recurrent models (Marian's), 0.05 for a Transformer (Garg
                                           et al. 2019); kept from the checkpoint on resume */
    int guided_cost;                    /* enum nmt_guided_cost: G_i's form (NMT_GUIDED_CE) */
} nmt_train_opts;

nmt_train_opts nmt_train_default_opts(void);

/* Overwrites o's settings with a named recipe; set single fields afterwards to change them. Each
 * recipe sets every field any recipe sets (the rest, the architecture included, is left alone).
 *   "paper":   Appendix B of Bahdanau et al. (the defaults above).
 *   "hour":    the best dev perplexity found for one hour of training on a 2-core machine
 *              (Multi30k en-fr; docs/results/training.md, "The `hour` preset"): the SMALL
 *              sizes (256 everywhere, 10,000 words per side), Adam (lr 0.002), dropout 0.5 on the maxout
 *              output and 0.2 on the embeddings and recurrent states, label smoothing 0.1, tied
 *              target embeddings, the attention's weights Glorot-uniform, the learning rate halved
 *              after each epoch that does not improve the dev NLL, stop after 4 such epochs or an hour.
 *   "hour-v1": "hour" as it was before that search (without the five options after dropout 0.5);
 *              the converged-architecture experiments (docs/results/claims.md) use it.
 *   "transformer-hour": a Transformer for the same hour (docs/TRAINING.md): d 128, 4 + 4 layers,
 *              4 heads, feed-forward 256, 10,000 words per side, tied target embeddings, dropout
 *              0.3, label smoothing 0.1, Adam (lr 0.002) warmed up over 1000 updates and decayed
 *              by the inverse square root after, clipping 5; stop after 5 validations without
 *              gain, or an hour.
 * Returns NMT_ERR_ARG for an unknown name. */
int nmt_train_preset(nmt_train_opts *o, const char *name, nmt_err *err);

/* ------------------------------------------------------------------ training on several processes
 * Synchronous data parallelism (docs/SCALING.md): every process (a rank) calls nmt_train with the
 * same options and inputs and its own nmt_comm of the same size. Each update takes the minibatch
 * one process would take; each rank computes the gradient of its share of the sentences; the
 * gradients are summed through the comm, and every rank applies the same update. Rank 0 alone
 * validates, writes the model, checkpoints and logs and calls the report callback; checkpoints hold
 * nothing rank-specific, so a run resumes with any number of ranks. Inputs or options that differ
 * between ranks are refused at start-up (NMT_ERR_MISMATCH, naming what differs).
 * The library holds no transport: the program fills the table (the nmt program does it with Open
 * MPI, src/mpi/). Each function is collective (every rank calls it, in the same order) and returns
 * 0, or non-zero after writing a message into msg (NMT_COMM_MSG bytes).
 * A failure every rank shares (inputs that differ, a failed validation or save on rank 0) leaves
 * its message on rank 0 and an empty one on the others; a non-empty message on a rank > 0 is that
 * rank's own failure (or one all ranks reached alike, such as too many non-finite updates), and
 * the others may be waiting for it: end the job. */
#define NMT_COMM_MSG 256
enum nmt_comm_type { NMT_COMM_FLOAT, NMT_COMM_DOUBLE, NMT_COMM_INT64 };
enum nmt_comm_op { NMT_COMM_SUM, NMT_COMM_MAX };

typedef struct nmt_comm {
    int rank, size;
    void *ctx;                          /* the implementation's */
    /* buf[0..n) of type becomes the element-wise op over all ranks, the same bits on every rank */
    int (*allreduce)(void *ctx, void *buf, size_t n, int type, int op, char *msg);
    /* buf[0..bytes) of rank root to every rank */
    int (*bcast)(void *ctx, void *buf, size_t bytes, int root, char *msg);
    /* out[r·bytes, (r+1)·bytes) = rank r's in[0..bytes), on every rank */
    int (*allgather)(void *ctx, const void *in, void *out, size_t bytes, char *msg);
} nmt_comm;

enum nmt_report_kind { NMT_REPORT_START, NMT_REPORT_PROGRESS, NMT_REPORT_VALID, NMT_REPORT_SAVE,
                       NMT_REPORT_WARN, NMT_REPORT_END };

typedef struct nmt_train_report {
    int kind;
    long update;
    int epoch;             /* current epoch, 1-based */
    double epoch_frac;     /* share of it done */
    double cost;           /* mean NLL per sentence over the updates since the last PROGRESS report */
    double grad_norm;      /* before clipping */
    double tok_per_s;      /* target tokens (EOS included) per second, same window */
    double elapsed;        /* seconds of training, resumed runs included */
    double eta;            /* seconds to the nearest stopping limit; < 0 when none is set */
    double dev_nll, dev_nll_tok, dev_ppl; /* VALID; all 0 when there is no dev set */
    double dev_bleu, dev_chrf;            /* VALID: when valid_metrics ask for them, else NAN */
    int improved, bad_validations;        /* VALID */
    double lr;             /* VALID: the learning rate from now on (lowered by lr_decay) */
    const char *msg;       /* START: the set-up summary; SAVE: the path; WARN and END: text (a WARN
                              also goes to the log callback, nmt_set_log) */
    double comm_frac;      /* PROGRESS and END, several ranks: share of the time spent summing
                              gradients across ranks (waiting for the slowest included); else 0 */
    double comm_s;         /* the same: seconds per update */
    double comm_bytes;     /* the same: bytes each rank contributes to the sums per update */
    double guided_cost;    /* PROGRESS: guided alignment's cost (unweighted Σ G) per sentence over the
                              same window; NAN without guided alignment */
} nmt_train_report;

typedef void (*nmt_train_cb)(const nmt_train_report *r, void *user);

/* Trains until a limit, early stopping or *opts->stop; returns NMT_OK, NMT_ERR_INTERRUPTED
 * (a checkpoint was written) or an error (nothing written over a good file). */
int nmt_train(const nmt_train_opts *opts, nmt_train_cb cb, void *user, nmt_err *err);

/* A constant string for a status code ("I/O error", ...). */
const char *nmt_status_str(int code);

/* Log callback: level is 'E', 'W' or 'M'; the default writes nothing. Warnings ('W') come from
 * training (every NMT_REPORT_WARN report, the same text, after the report callback; a shortlist
 * smaller than asked for; a resumed run's checkpoint settings that replace the options given)
 * and from decoding (alignments asked of a model without attention). One callback for the
 * process: set it before starting threads. */
typedef void (*nmt_log_fn)(char level, const char *msg, void *user);
void nmt_set_log(nmt_log_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif /* NMT_H */
