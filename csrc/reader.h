/* reader.h: bounds-checked little-endian reading of a blob (internal). */
#ifndef TOOLPARSE_READER_H
#define TOOLPARSE_READER_H

#include "common.h"

typedef struct tp_reader {
    const uint8_t *p, *end;
    int bad; /* set by a read past the end; every later read returns 0 / NULL */
} tp_reader;

static inline uint32_t tp_read_u32(tp_reader *r) {
    uint32_t v;
    if (r->bad || (size_t)(r->end - r->p) < 4) {
        r->bad = 1;
        return 0;
    }
    v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
        (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

static inline const uint8_t *tp_read_bytes(tp_reader *r, uint32_t n) {
    const uint8_t *at = r->p;
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    r->p += n;
    return at;
}

#endif
