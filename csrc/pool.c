/* pool.c: blocks for streams' fixed state, from slabs on huge pages (see pool.h). */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mmap and madvise, which -std=c99 hides */
#endif
#include "pool.h"

#include <string.h>

#include "alloc.h"
#include "vec.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define POOL_MMAP 1
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif
#endif

/* Under AddressSanitizer each block is an allocation of its own, so that a write past a
 * stream's block is caught as on the heap (a slab would hide it in the next block). */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_HEAP_BLOCKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_HEAP_BLOCKS 1
#endif
#endif

/* The huge page size of x86-64 and of most arm64 systems; elsewhere slabs are just large. */
#define SLAB_BYTES ((size_t)2 << 20)
#define SLAB_MIN_BLOCKS 8u

typedef struct slab {
    void *start; /* what to unmap or free */
    size_t bytes;
} slab;

struct tp_pool {
    size_t block_size;
    uint8_t *fresh, *fresh_end; /* the newest slab's part never handed out (zeroed) */
    void *given_back;           /* blocks given back, each holding the next one's address */
    tp_vec slabs;               /* slab records */
    size_t live;
    tp_allocator alloc;
};

tp_status tp_pool_new(tp_pool **out) { return tp_pool_new_with(NULL, out); }

tp_status tp_pool_new_with(const tp_allocator *alloc, tp_pool **out) {
    tp_allocator a;
    tp_pool *pool;
    if (!out) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    pool = (tp_pool *)tp_alloc_zeroed(&a, sizeof *pool);
    if (!pool) return TP_ERR_NOMEM;
    pool->alloc = a;
    pool->slabs.alloc = &pool->alloc;
    *out = pool;
    return TP_OK;
}

static void release_slab(const tp_pool *pool, const slab *s) {
#ifdef POOL_MMAP
    (void)pool;
    munmap(s->start, s->bytes);
#else
    tp_free(&pool->alloc, s->start);
#endif
}

void tp_pool_free(tp_pool *pool) {
    tp_allocator a;
    size_t k;
    if (!pool) return;
    for (k = 0; k < pool->slabs.len; k++) release_slab(pool, &TP_VEC_AT(pool->slabs, slab, k));
    tp_vec_free(&pool->slabs);
    a = pool->alloc;
    tp_free(&a, pool);
}

size_t tp_pool_block_size(const tp_pool *pool) { return pool->block_size; }

size_t tp_pool_live(const tp_pool *pool) { return pool->live; }

void tp_pool_learn(tp_pool *pool, size_t block_size) {
    if (pool->block_size || block_size == 0 || block_size > SLAB_BYTES * 64) return;
    block_size = (block_size + TP_CACHE_LINE - 1) / TP_CACHE_LINE;
    /* an odd number of lines: the same field of successive blocks then falls in every
     * cache set in turn, not in every second one (an even stride halves the sets a
     * thousand streams' hot lines can use) */
    pool->block_size = (block_size | 1u) * TP_CACHE_LINE;
}

#ifndef POOL_HEAP_BLOCKS
/* bytes of zeroed memory aligned to a slab (a cache line without mmap), or NULL. */
static uint8_t *new_slab_memory(const tp_pool *pool, size_t bytes, slab *s) {
#ifdef POOL_MMAP
    size_t span = bytes + SLAB_BYTES, head, tail;
    (void)pool;
    uint8_t *raw, *base;
    raw = (uint8_t *)mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((void *)raw == MAP_FAILED) return NULL;
    /* huge pages need 2 MiB alignment: keep the aligned middle, return the ends */
    base = (uint8_t *)TP_ALIGN_UP(raw, SLAB_BYTES);
    head = (size_t)(base - raw);
    tail = span - head - bytes;
    if (head) munmap(raw, head);
    if (tail) munmap(base + bytes, tail);
#ifdef MADV_HUGEPAGE
    madvise(base, bytes, MADV_HUGEPAGE); /* a hint: where huge pages are off, 4 KiB pages */
#endif
    s->start = base;
    s->bytes = bytes;
    return base;
#else
    uint8_t *raw = (uint8_t *)tp_alloc_zeroed(&pool->alloc, bytes + TP_CACHE_LINE - 1);
    if (!raw) return NULL;
    s->start = raw;
    s->bytes = bytes;
    return (uint8_t *)TP_ALIGN_UP(raw, TP_CACHE_LINE);
#endif
}

static tp_status add_slab(tp_pool *pool) {
    size_t bytes = SLAB_BYTES;
    uint8_t *memory;
    if (pool->block_size > SLAB_BYTES / SLAB_MIN_BLOCKS) /* a slab holds a few blocks at least */
        bytes = (pool->block_size * SLAB_MIN_BLOCKS + SLAB_BYTES - 1) & ~(SLAB_BYTES - 1);
    TP_TRY(tp_vec_reserve(&pool->slabs, sizeof(slab), 1));
    memory = new_slab_memory(pool, bytes, &TP_VEC_AT(pool->slabs, slab, pool->slabs.len));
    if (!memory) return TP_ERR_NOMEM;
    pool->slabs.len++;
    pool->fresh = memory;
    pool->fresh_end = memory + bytes;
    return TP_OK;
}
#endif

void *tp_pool_take(tp_pool *pool) {
    uint8_t *block;
    size_t size = pool->block_size;
    if (!size) return NULL;
#ifdef POOL_HEAP_BLOCKS
    {
        /* the heap's address sits just before the block */
        uint8_t *raw = (uint8_t *)tp_alloc_zeroed(&pool->alloc, size + 2 * TP_CACHE_LINE);
        if (!raw) return NULL;
        block = (uint8_t *)TP_ALIGN_UP(raw + sizeof(void *), TP_CACHE_LINE);
        memcpy(block - sizeof(void *), &raw, sizeof raw);
    }
#else
    if (pool->given_back) {
        block = (uint8_t *)pool->given_back;
        memcpy(&pool->given_back, block, sizeof(void *));
        memset(block, 0, size);
    } else {
        if ((size_t)(pool->fresh_end - pool->fresh) < size && add_slab(pool) != TP_OK) return NULL;
        block = pool->fresh;
        pool->fresh += size;
    }
#endif
    pool->live++;
    return block;
}

void tp_pool_give_back(tp_pool *pool, void *block) {
    if (!block) return;
    pool->live--;
#ifdef POOL_HEAP_BLOCKS
    {
        void *raw;
        memcpy(&raw, (uint8_t *)block - sizeof(void *), sizeof raw);
        tp_free(&pool->alloc, raw);
    }
#else
    memcpy(block, &pool->given_back, sizeof(void *));
    pool->given_back = block;
#endif
}

void *tp_place_take(const tp_allocator *alloc, tp_place *place, size_t size, void **allocation) {
    tp_allocator fallback;
    size_t lines;
    void *raw;
    *allocation = NULL;
    if (size > SIZE_MAX / 2) return NULL;
    lines = (size + TP_CACHE_LINE - 1) & ~(size_t)(TP_CACHE_LINE - 1);
    if (place) {
        place->wanted += lines;
        if (place->next && lines <= (size_t)(place->end - place->next)) {
            void *at = place->next; /* zeroed: the pool hands out zeroed blocks */
            place->next += lines;
            return at;
        }
    }
    if (!alloc) {
        tp_allocator_init(&fallback, NULL);
        alloc = &fallback;
    }
    raw = tp_alloc_zeroed(alloc, size + TP_CACHE_LINE - 1);
    if (!raw) return NULL;
    *allocation = raw;
    return TP_ALIGN_UP(raw, TP_CACHE_LINE);
}
