/* fuzz.h: the fuzz harnesses' entry points. Each takes one input and runs it through a reader
 * the way the program does; any crash, sanitizer report or leak is the finding. libFuzzer calls
 * them from fuzz/libfuzzer_main.c (make fuzz); tests/test_fuzz_replay.c replays the committed
 * corpora and regressions through the same functions in every `make test`, without libFuzzer. */
#ifndef NMT_FUZZ_H
#define NMT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int fuzz_modelfile(const uint8_t *data, size_t size);   /* safetensors + model file checks */
int fuzz_checkpoint(const uint8_t *data, size_t size);  /* train_state, saved plan, optimizer state */
int fuzz_corpus(const uint8_t *data, size_t size);      /* text file reader, counts, vocabularies, pairs */
int fuzz_tokenize(const uint8_t *data, size_t size);    /* Moses tokenizer (+ lowercase, normalize) */
int fuzz_detokenize(const uint8_t *data, size_t size);  /* Moses detokenizer */
int fuzz_alignio(const uint8_t *data, size_t size);     /* gold, test and soft alignment readers */
int fuzz_bleu(const uint8_t *data, size_t size);        /* BLEU on a hypothesis and its references */
int fuzz_request(const uint8_t *data, size_t size);     /* nmt serve's POST /translate body and answer */
int fuzz_http(const uint8_t *data, size_t size);        /* raw bytes to a running nmt serve */
int fuzz_api(const uint8_t *data, size_t size);         /* a program of public API calls on tiny models */
int fuzz_npz(const uint8_t *data, size_t size);         /* .npz archives (Marian models): ZIP, deflate, .npy */
int fuzz_marian(const uint8_t *data, size_t size);      /* a Marian vocabulary .yml and model .npz converted */

/* The bytes as a file that path-based readers can open: a path to an in-memory file (memfd),
 * valid until the next call with the same slot (0..3). NULL if it cannot be made. */
const char *fuzz_file(int slot, const uint8_t *data, size_t size);

/* Splits data at the first byte `sep`: *n1 bytes from data, then the rest (after sep) in
 * *p2 / *n2; without sep the second part is the whole input again. */
void fuzz_split(const uint8_t *data, size_t size, uint8_t sep, size_t *n1, const uint8_t **p2, size_t *n2);

struct nmt_model;
/* A model that a reader accepted translates one sentence (beam 2, attention kept), so that what
 * the checks let through is used once; skipped for models over 200,000 parameters. */
void fuzz_translate_once(const struct nmt_model *m);

#endif
