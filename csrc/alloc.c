/* alloc.c: the default allocator, the checked allocation helpers, and tp_vec's growth. */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

static void *default_alloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}

static void *default_realloc(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    return realloc(ptr, size);
}

static void default_free(void *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
}

tp_status tp_allocator_init(tp_allocator *dst, const tp_allocator *src) {
    if (!src) {
        dst->alloc = default_alloc;
        dst->realloc = default_realloc;
        dst->free = default_free;
        dst->ctx = NULL;
        return TP_OK;
    }
    if (!src->alloc || !src->realloc || !src->free) return TP_ERR_ARG;
    *dst = *src;
    return TP_OK;
}

void *tp_alloc(const tp_allocator *a, size_t size) { return a->alloc(a->ctx, size ? size : 1); }

void *tp_alloc_zeroed(const tp_allocator *a, size_t size) {
    void *p = tp_alloc(a, size);
    if (p) memset(p, 0, size);
    return p;
}

void *tp_alloc_array(const tp_allocator *a, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    return tp_alloc(a, n * size);
}

void *tp_alloc_array_zeroed(const tp_allocator *a, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    return tp_alloc_zeroed(a, n * size);
}

void *tp_realloc(const tp_allocator *a, void *ptr, size_t size) {
    if (!ptr) return tp_alloc(a, size);
    return a->realloc(a->ctx, ptr, size ? size : 1);
}

void tp_free(const tp_allocator *a, void *ptr) {
    if (ptr) a->free(a->ctx, ptr);
}

tp_status tp_vec_grow(tp_vec *v, size_t item, size_t n) {
    size_t max = SIZE_MAX / item, cap;
    uint8_t *grown;
    if (!v->alloc) return TP_ERR_STATE; /* a vector made without its owner's allocator */
    if (n > max - v->len) return TP_ERR_NOMEM;
    cap = v->cap ? v->cap : (64 / item > 16 ? 64 / item : 16);
    while (cap - v->len < n) {
        if (cap > max / 2) return TP_ERR_NOMEM;
        cap *= 2;
    }
    grown = (uint8_t *)tp_realloc(v->alloc, v->data, cap * item);
    if (!grown) return TP_ERR_NOMEM;
    v->data = grown;
    v->cap = cap;
    return TP_OK;
}
