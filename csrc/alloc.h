/* alloc.h: the core's allocations, each through the tp_allocator of the object it is for
 * (internal).  Every one is checked; sizes are checked for overflow before they are
 * asked for. */
#ifndef TOOLPARSE_ALLOC_H
#define TOOLPARSE_ALLOC_H

#include "common.h"

/* Copies src into dst, or the default allocator (malloc) when src is NULL.  TP_ERR_ARG
 * when src lacks a function. */
tp_status tp_allocator_init(tp_allocator *dst, const tp_allocator *src);

/* size bytes (at least one is asked for, so NULL always means no memory), or NULL. */
void *tp_alloc(const tp_allocator *a, size_t size);
/* The same, zeroed. */
void *tp_alloc_zeroed(const tp_allocator *a, size_t size);
/* n items of size bytes, zeroed or not; NULL as well when n * size overflows. */
void *tp_alloc_array(const tp_allocator *a, size_t n, size_t size);
void *tp_alloc_array_zeroed(const tp_allocator *a, size_t n, size_t size);
/* ptr resized to size bytes (ptr NULL: a new allocation), or NULL with ptr unchanged. */
void *tp_realloc(const tp_allocator *a, void *ptr, size_t size);
/* NULL-safe. */
void tp_free(const tp_allocator *a, void *ptr);

#endif
