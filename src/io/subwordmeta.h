/* subwordmeta.h: a model's subword units (data/subword.h) as the "subwords" entry of a model
 * file's metadata: the serialized SentencePiece model(s) in base64 and the text stages of each
 * side; a raw-text word model's stages as the "text" entry. Both are covered by the file's
 * metadata checksum like every other entry. */
#ifndef NMT_SUBWORDMETA_H
#define NMT_SUBWORDMETA_H

#include "nmt.h"
#include "data/subword.h"

#define SUBWORDS_KEY "subwords"
#define TEXT_STAGES_KEY "text"

/* The JSON text (free with cJSON_free); NULL without memory. */
char *subwords_meta_json(const subwords *sw);
/* Parses and loads it: unknown or missing keys, bad base64 and a SentencePiece model that does
 * not load are NMT_ERR_FORMAT naming file and side. */
int subwords_meta_parse(subwords **out, const char *json, const char *file, nmt_err *err);

/* A word model's stages of both sides as JSON (free with cJSON_free); NULL without memory. */
char *text_stages_meta_json(const nmt_text_opts text[2]);
/* Parses it: unknown or missing keys, lowercasing without tokenizing, and an entry with no
 * stage are NMT_ERR_FORMAT naming file and side. */
int text_stages_meta_parse(nmt_text_opts text[2], const char *json, const char *file, nmt_err *err);

#endif
