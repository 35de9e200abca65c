/* vec.h: the core's one growable array (internal): items of a fixed size, grown by
 * doubling through the owner's allocator.  Growth is checked for overflow and for memory;
 * a failed growth leaves the vector as it was.  Reserving first and writing in place keeps
 * the hot paths to one comparison per append. */
#ifndef TOOLPARSE_VEC_H
#define TOOLPARSE_VEC_H

#include <string.h>

#include "alloc.h"
#include "common.h"

typedef struct tp_vec {
    uint8_t *data; /* NULL until the first growth */
    size_t len, cap; /* in items */
    const tp_allocator *alloc; /* the owning object's (growth without one: TP_ERR_STATE) */
} tp_vec;

#define TP_VEC_INIT(allocator) {NULL, 0, 0, (allocator)}
/* Item i, as a type (the vector's item type). */
#define TP_VEC_AT(v, type, i) (((type *)(void *)(v).data)[i])

/* Grows v to room for n more items (tp_vec_reserve's slow path). */
tp_status tp_vec_grow(tp_vec *v, size_t item, size_t n);

/* Makes room for n more items of item bytes. */
static inline tp_status tp_vec_reserve(tp_vec *v, size_t item, size_t n) {
    return TP_LIKELY(n <= v->cap - v->len) ? TP_OK : tp_vec_grow(v, item, n);
}

/* Appends n items. */
static inline tp_status tp_vec_append(tp_vec *v, size_t item, const void *src, size_t n) {
    if (n == 0) return TP_OK; /* (an empty vector's data may be NULL: no offset from it) */
    TP_TRY(tp_vec_reserve(v, item, n));
    memcpy(v->data + v->len * item, src, n * item);
    v->len += n;
    return TP_OK;
}

static inline tp_status tp_vec_push(tp_vec *v, size_t item, const void *src) {
    return tp_vec_append(v, item, src, 1);
}

/* Gives the storage back; v stays usable (empty). */
static inline void tp_vec_free(tp_vec *v) {
    if (v->data) tp_free(v->alloc, v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

#endif
