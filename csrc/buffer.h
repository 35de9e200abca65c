/* buffer.h: a growable byte buffer: a tp_vec of bytes (internal). */
#ifndef TOOLPARSE_BUFFER_H
#define TOOLPARSE_BUFFER_H

#include <string.h>

#include "common.h"
#include "vec.h"

typedef tp_vec tp_buf;

#define TP_BUF_INIT(allocator) TP_VEC_INIT(allocator)

/* Makes room for n more bytes; TP_ERR_NOMEM when growing fails (the buffer is unchanged). */
static inline tp_status tp_buf_reserve(tp_buf *b, size_t n) { return tp_vec_reserve(b, 1, n); }

/* Appends n bytes; TP_ERR_NOMEM when growing fails (the buffer is unchanged). */
static inline tp_status tp_buf_append(tp_buf *b, const void *src, size_t n) {
    return tp_vec_append(b, 1, src, n);
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

static inline void tp_buf_free(tp_buf *b) { tp_vec_free(b); }

#endif
