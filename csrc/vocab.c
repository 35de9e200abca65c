/* vocab.c: token ids to bytes. */
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

struct tp_vocab {
    uint8_t *bytes;
    uint32_t *offsets; /* n_tokens + 1 */
    uint8_t *special;  /* n_tokens flags */
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
    v = (tp_vocab *)calloc(1, sizeof *v);
    if (!v) return TP_ERR_NOMEM;
    v->bytes = (uint8_t *)malloc(n_bytes ? n_bytes : 1);
    v->offsets = (uint32_t *)malloc(((size_t)n_tokens + 1) * sizeof(uint32_t));
    v->special = (uint8_t *)calloc(n_tokens ? n_tokens : 1, 1);
    if (!v->bytes || !v->offsets || !v->special) {
        tp_vocab_free(v);
        return TP_ERR_NOMEM;
    }
    if (n_bytes) memcpy(v->bytes, bytes, n_bytes);
    memcpy(v->offsets, offsets, ((size_t)n_tokens + 1) * sizeof(uint32_t));
    if (special && n_tokens) memcpy(v->special, special, n_tokens);
    v->n_tokens = n_tokens;
    *out = v;
    return TP_OK;
}

void tp_vocab_free(tp_vocab *v) {
    if (!v) return;
    free(v->bytes);
    free(v->offsets);
    free(v->special);
    free(v);
}

uint32_t tp_vocab_size(const tp_vocab *v) { return v->n_tokens; }

int tp_vocab_is_special(const tp_vocab *v, uint32_t id) {
    return id < v->n_tokens && v->special[id] != 0;
}

const uint8_t *tp_vocab_token(const tp_vocab *v, uint32_t id, uint32_t *len) {
    if (id >= v->n_tokens) return NULL;
    *len = v->offsets[id + 1] - v->offsets[id];
    return v->bytes + v->offsets[id];
}
