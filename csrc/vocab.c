/* vocab.c: token ids to bytes. */
#include "vocab.h"

#include <string.h>

#include "alloc.h"

/* A token in one 16-byte entry: its length and whether it is special, then its bytes
 * themselves when they fit (most tokens), else their offset in the byte table.  A decode
 * step of many streams reads one entry per stream, at random, and each line is a likely
 * miss: a token that fits costs one line instead of two. */
#define INLINE_BYTES 12

typedef struct entry {
    uint32_t length_special; /* length << 1 | special */
    union {
        uint8_t bytes[INLINE_BYTES]; /* length <= INLINE_BYTES */
        uint32_t offset;             /* longer: where in the byte table */
    } at;
} entry;

struct tp_vocab {
    uint8_t *bytes;
    entry *entries; /* n_tokens */
    uint32_t n_tokens;
    tp_allocator alloc;
};

tp_status tp_vocab_new(const uint8_t *bytes, size_t n_bytes, const uint32_t *offsets,
                       const uint8_t *special, uint32_t n_tokens, tp_vocab **out) {
    return tp_vocab_new_with(NULL, bytes, n_bytes, offsets, special, n_tokens, out);
}

tp_status tp_vocab_new_with(const tp_allocator *alloc, const uint8_t *bytes, size_t n_bytes,
                            const uint32_t *offsets, const uint8_t *special, uint32_t n_tokens,
                            tp_vocab **out) {
    tp_allocator a;
    tp_vocab *v;
    uint32_t k;
    if (!out || !offsets || (n_bytes && !bytes) || n_bytes > UINT32_MAX) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    for (k = 0; k < n_tokens; k++) {
        if (offsets[k] > offsets[k + 1]) return TP_ERR_ARG;
    }
    if (offsets[n_tokens] > n_bytes) return TP_ERR_ARG;
    for (k = 0; k < n_tokens; k++) { /* a length must leave room for the special flag */
        if (offsets[k + 1] - offsets[k] > UINT32_MAX >> 1) return TP_ERR_ARG;
    }
    v = (tp_vocab *)tp_alloc_zeroed(&a, sizeof *v);
    if (!v) return TP_ERR_NOMEM;
    v->alloc = a;
    v->bytes = (uint8_t *)tp_alloc(&a, n_bytes);
    v->entries = (entry *)tp_alloc_array(&a, n_tokens, sizeof(entry));
    if (!v->bytes || !v->entries) {
        tp_vocab_free(v);
        return TP_ERR_NOMEM;
    }
    if (n_bytes) memcpy(v->bytes, bytes, n_bytes);
    for (k = 0; k < n_tokens; k++) {
        entry *e = &v->entries[k];
        uint32_t length = offsets[k + 1] - offsets[k];
        e->length_special = length << 1 | (uint32_t)(special && special[k] != 0);
        memset(&e->at, 0, sizeof e->at);
        if (length <= INLINE_BYTES) {
            if (length) memcpy(e->at.bytes, bytes + offsets[k], length);
        } else {
            e->at.offset = offsets[k];
        }
    }
    v->n_tokens = n_tokens;
    *out = v;
    return TP_OK;
}

void tp_vocab_free(tp_vocab *v) {
    tp_allocator a;
    if (!v) return;
    a = v->alloc;
    tp_free(&a, v->bytes);
    tp_free(&a, v->entries);
    tp_free(&a, v);
}

uint32_t tp_vocab_size(const tp_vocab *v) { return v->n_tokens; }

int tp_vocab_is_special(const tp_vocab *v, uint32_t id) {
    return id < v->n_tokens && (v->entries[id].length_special & 1u) != 0;
}

const uint8_t *tp_vocab_token(const tp_vocab *v, uint32_t id, uint32_t *len) {
    const entry *e;
    if (id >= v->n_tokens) return NULL;
    e = &v->entries[id];
    *len = e->length_special >> 1;
    return *len <= INLINE_BYTES ? e->at.bytes : v->bytes + e->at.offset;
}

void tp_vocab_prefetch_entry(const tp_vocab *v, uint32_t id) {
    if (id < v->n_tokens) TP_PREFETCH(&v->entries[id]);
}

void tp_vocab_prefetch_bytes(const tp_vocab *v, uint32_t id) {
    const entry *e;
    if (id >= v->n_tokens) return;
    e = &v->entries[id];
    if (e->length_special >> 1 > INLINE_BYTES) TP_PREFETCH(v->bytes + e->at.offset);
}
