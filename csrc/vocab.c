/* vocab.c: token ids to bytes. */
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

/* A token's place in bytes, and whether it is special, in one 8-byte entry: a decode step
 * of many streams reads one entry per stream, at random, and each line is a likely miss. */
typedef struct entry {
    uint32_t offset;
    uint32_t length_special; /* length << 1 | special */
} entry;

struct tp_vocab {
    uint8_t *bytes;
    entry *entries; /* n_tokens */
    uint32_t n_tokens;
};

tp_status tp_vocab_new(const uint8_t *bytes, size_t n_bytes, const uint32_t *offsets,
                       const uint8_t *special, uint32_t n_tokens, tp_vocab **out) {
    tp_vocab *v;
    uint32_t k;
    if (!out || !offsets || (n_bytes && !bytes) || n_bytes > UINT32_MAX) return TP_ERR_ARG;
    *out = NULL;
    for (k = 0; k < n_tokens; k++) {
        if (offsets[k] > offsets[k + 1]) return TP_ERR_ARG;
    }
    if (offsets[n_tokens] > n_bytes) return TP_ERR_ARG;
    for (k = 0; k < n_tokens; k++) { /* a length must leave room for the special flag */
        if (offsets[k + 1] - offsets[k] > UINT32_MAX >> 1) return TP_ERR_ARG;
    }
    v = (tp_vocab *)calloc(1, sizeof *v);
    if (!v) return TP_ERR_NOMEM;
    v->bytes = (uint8_t *)malloc(n_bytes ? n_bytes : 1);
    v->entries = (entry *)malloc((n_tokens ? n_tokens : 1) * sizeof(entry));
    if (!v->bytes || !v->entries) {
        tp_vocab_free(v);
        return TP_ERR_NOMEM;
    }
    if (n_bytes) memcpy(v->bytes, bytes, n_bytes);
    for (k = 0; k < n_tokens; k++) {
        v->entries[k].offset = offsets[k];
        v->entries[k].length_special =
            (offsets[k + 1] - offsets[k]) << 1 | (uint32_t)(special && special[k] != 0);
    }
    v->n_tokens = n_tokens;
    *out = v;
    return TP_OK;
}

void tp_vocab_free(tp_vocab *v) {
    if (!v) return;
    free(v->bytes);
    free(v->entries);
    free(v);
}

uint32_t tp_vocab_size(const tp_vocab *v) { return v->n_tokens; }

int tp_vocab_is_special(const tp_vocab *v, uint32_t id) {
    return id < v->n_tokens && (v->entries[id].length_special & 1u) != 0;
}

const uint8_t *tp_vocab_token(const tp_vocab *v, uint32_t id, uint32_t *len) {
    if (id >= v->n_tokens) return NULL;
    *len = v->entries[id].length_special >> 1;
    return v->bytes + v->entries[id].offset;
}

void tp_vocab_prefetch_entry(const tp_vocab *v, uint32_t id) {
    if (id < v->n_tokens) TP_PREFETCH(&v->entries[id]);
}

void tp_vocab_prefetch_bytes(const tp_vocab *v, uint32_t id) {
    if (id < v->n_tokens) TP_PREFETCH(v->bytes + v->entries[id].offset);
}
