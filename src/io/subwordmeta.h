/* subwordmeta.h: a model's subword units (text/subword.h) as the "subwords" entry of a model
 * file's metadata: the serialized SentencePiece model(s) in base64 and the text stages of each
 * side, covered by the file's metadata checksum like every other entry. */
#ifndef NMT_SUBWORDMETA_H
#define NMT_SUBWORDMETA_H

#include "nmt.h"
#include "text/subword.h"

#define SUBWORDS_KEY "subwords"

/* The JSON text (free with cJSON_free); NULL without memory. */
char *subwords_meta_json(const subwords *sw);
/* Parses and loads it: unknown or missing keys, bad base64 and a SentencePiece model that does
 * not load are NMT_ERR_FORMAT naming file and side. */
int subwords_meta_parse(subwords **out, const char *json, const char *file, nmt_err *err);

#endif
