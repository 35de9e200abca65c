/* vocab.h: a tokenizer's tokens as bytes, for feeding streams token ids.  One contiguous
 * byte table plus offsets; immutable once built: share it across streams and threads. */
#ifndef TOOLPARSE_VOCAB_H
#define TOOLPARSE_VOCAB_H

#include "common.h"

typedef struct tp_vocab tp_vocab;

/* Copies n_tokens tokens: token i is bytes[offsets[i] .. offsets[i + 1]).  offsets has
 * n_tokens + 1 entries, non-decreasing, the last at most n_bytes (else TP_ERR_ARG).
 * special (n_tokens flags, or NULL for none) marks special tokens.  Caller frees with
 * tp_vocab_free(). */
tp_status tp_vocab_new(const uint8_t *bytes, size_t n_bytes, const uint32_t *offsets,
                       const uint8_t *special, uint32_t n_tokens, tp_vocab **out);
/* tp_vocab_new with an allocator (common.h; NULL: the default). */
tp_status tp_vocab_new_with(const tp_allocator *alloc, const uint8_t *bytes, size_t n_bytes,
                            const uint32_t *offsets, const uint8_t *special, uint32_t n_tokens,
                            tp_vocab **out);
void tp_vocab_free(tp_vocab *v); /* NULL-safe */

uint32_t tp_vocab_size(const tp_vocab *v);
int tp_vocab_is_special(const tp_vocab *v, uint32_t id); /* 0 for an id out of range */

/* Token id's bytes (borrowed, valid while v lives), or NULL when id is out of range. */
const uint8_t *tp_vocab_token(const tp_vocab *v, uint32_t id, uint32_t *len);
/* Ask the cache for token id's entry, then (a few steps later: it reads the entry) for its
 * bytes: for callers that look up many tokens in turn. */
void tp_vocab_prefetch_entry(const tp_vocab *v, uint32_t id);
void tp_vocab_prefetch_bytes(const tp_vocab *v, uint32_t id);

#endif
