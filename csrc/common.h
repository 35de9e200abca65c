/* common.h: status codes and small helpers shared by the C core.
 * Pure C99; never includes Python.h. */
#ifndef TOOLPARSE_COMMON_H
#define TOOLPARSE_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Every fallible function returns a tp_status. */
typedef enum tp_status {
    TP_OK = 0,
    TP_ERR_NOMEM = 1,   /* an allocation failed; the object is unchanged */
    TP_ERR_ARG = 2,     /* an argument is out of its documented range */
    TP_ERR_STATE = 3,   /* the call is not allowed in the object's state */
    TP_ERR_NOSPACE = 4  /* an output buffer is too small; the needed size is reported */
} tp_status;

/* Where the core's memory comes from.  Every constructor has a _with variant that takes
 * one (NULL: malloc, realloc and free); the object keeps a copy and makes every allocation
 * of its own through it, so the struct given need not outlive the call.  alloc and
 * realloc return NULL when there is no memory (realloc then leaves ptr as it was); size is
 * never 0, and ptr never NULL.  The core calls them from the thread that calls it, so a
 * ctx used by objects on several threads must be thread-safe. */
typedef struct tp_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} tp_allocator;

#if defined(__GNUC__) || defined(__clang__)
#define TP_LIKELY(x) __builtin_expect(!!(x), 1)
#define TP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TP_PREFETCH(p) __builtin_prefetch(p)
#define TP_NOINLINE __attribute__((noinline))
#else
#define TP_LIKELY(x) (x)
#define TP_UNLIKELY(x) (x)
#define TP_PREFETCH(p) ((void)(p))
#define TP_NOINLINE
#endif

/* Returns the status of a call that failed; what was allocated before it is the caller's
 * (or its object's) to free, so a failure leaves nothing half-built behind. */
#define TP_TRY(expr)                                        \
    do {                                                    \
        tp_status tp_try_status_ = (expr);                  \
        if (tp_try_status_ != TP_OK) return tp_try_status_; \
    } while (0)

/* JSON's whitespace, which is also what the formats' grammars skip between parts. */
static inline int tp_is_space(uint8_t b) { return b == ' ' || b == '\t' || b == '\r' || b == '\n'; }

/* Structs that many streams keep, one per stream, align their hot fields to this. */
#define TP_CACHE_LINE 64
#define TP_ALIGN_UP(p, n) ((void *)(((uintptr_t)(p) + ((n) - 1)) & ~(uintptr_t)((n) - 1)))

#endif
