/* spm.h: SentencePiece (Kudo & Richardson 2018) behind a C interface: loading a serialized
 * model, its pieces, segmenting a line into piece ids and joining ids back into text, and
 * training a unigram or BPE model on lines held in memory. spm.cc is the one C++ file of the
 * project; everything else sees only this header. No C++ exception crosses it.
 *
 * Thread safety: a loaded spm is read-only; any number of threads may encode and decode with
 * it at once, each with its own output buffers. */
#ifndef NMT_SPM_H
#define NMT_SPM_H

#include <stddef.h>

#include "nmt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spm spm;

/* What a piece is to SentencePiece; only SPM_NORMAL and SPM_BYTE pieces come out of an encoder
 * besides the unknown piece. */
enum spm_kind { SPM_NORMAL = 0, SPM_UNKNOWN = 1, SPM_CONTROL = 2, SPM_UNUSED = 3, SPM_BYTE = 4 };
enum spm_type { SPM_UNIGRAM = 1, SPM_BPE = 2 };

/* A model from its serialized protobuf bytes[0..len) (what spm_train writes to m.model). A
 * malformed protobuf is NMT_ERR_FORMAT with SentencePiece's reason; what names the model in
 * the message ("m.nmt: the source side's SentencePiece model"). */
int spm_load(spm **out, const void *bytes, size_t len, const char *what, nmt_err *err);
void spm_free(spm *s);

int spm_size(const spm *s);                  /* pieces, ids 0..size-1 */
const char *spm_piece(const spm *s, int id); /* NUL-terminated, valid while s lives */
int spm_kind(const spm *s, int id);          /* enum spm_kind */
int spm_unk_id(const spm *s);
/* The serialized model, as loaded (valid while s lives). */
const void *spm_bytes(const spm *s, size_t *len);

/* A segmented line: n pieces, each with its id and its span [begin, end) in the text given
 * (bytes; a piece that spells part of a character in bytes may have an empty span). */
typedef struct spm_seg {
    int n;
    int *id, *begin, *end;
    size_t cap;
} spm_seg;

void spm_seg_free(spm_seg *g);

/* Segments text[0..len) into g (its arrays grown as needed and kept for the next line).
 * NMT_ERR_NOMEM, or NMT_ERR_FORMAT when SentencePiece refuses the text. */
int spm_encode(const spm *s, const char *text, size_t len, spm_seg *g, nmt_err *err);
/* Joins ids[0..n) into text: *buf (grown with realloc; *cap its size) holds *len bytes and a NUL;
 * spans (if not NULL) gets each piece's span in that text. Control characters (byte pieces
 * <0x00>..<0x1F>, <0x7F>) come out as spaces: no NUL, no line break. */
int spm_decode(const spm *s, const int *ids, int n, char **buf, size_t *cap, size_t *len, spm_seg *spans, nmt_err *err);

/* Trains a model on lines[0..n_lines) (each a sentence; NUL-terminated) with SentencePiece's
 * trainer: type, vocab_size pieces (fewer if the text has too few: hard limit off), EOS "</s>"
 * id 0 and UNK "<unk>" id 1 as nmt's vocabularies have them, no BOS or padding, byte fallback on
 * (a character the model has no piece for is spelt in UTF-8 bytes, never lost to UNK), no
 * normalisation of its own (the text pipeline's stages run before it). *model (malloc'ed) holds
 * the serialized result. */
int spm_train(const char *const *lines, long n_lines, int type, int vocab_size, int threads, unsigned seed,
              char **model, size_t *len, nmt_err *err);

#ifdef __cplusplus
}
#endif
#endif
