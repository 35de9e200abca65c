/* buffer.h: a growable byte buffer with a hard size limit (internal). */
#ifndef TOOLPARSE_BUFFER_H
#define TOOLPARSE_BUFFER_H

#include <stdlib.h>
#include <string.h>

#include "common.h"

typedef struct tp_buf {
    uint8_t *data;
    size_t len, cap;
} tp_buf;

/* Makes room for n more bytes; TP_ERR_NOMEM when growing fails (the buffer is unchanged). */
static inline tp_status tp_buf_reserve(tp_buf *b, size_t n) {
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 64;
        uint8_t *grown;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) return TP_ERR_NOMEM;
            cap *= 2;
        }
        grown = (uint8_t *)realloc(b->data, cap);
        if (!grown) return TP_ERR_NOMEM;
        b->data = grown;
        b->cap = cap;
    }
    return TP_OK;
}

/* Appends n bytes; TP_ERR_NOMEM when growing fails (the buffer is unchanged). */
static inline tp_status tp_buf_append(tp_buf *b, const void *src, size_t n) {
    if (n == 0) return TP_OK; /* (an empty buffer's data may be NULL: no offset from it) */
    if (tp_buf_reserve(b, n) != TP_OK) return TP_ERR_NOMEM;
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return TP_OK;
}

/* Copies n bytes: the few bytes of one token in a handful of moves, not a library call
 * (a batch step copies a token's bytes for thousands of streams). */
static inline void tp_copy_short(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t k;
    if (n > 16) {
        memcpy(dst, src, n);
    } else if (n >= 8) { /* two fixed-size moves that may overlap */
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else {
        for (k = 0; k < n; k++) dst[k] = src[k];
    }
}

static inline void tp_buf_free(tp_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
