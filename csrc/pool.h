/* pool.h: one block of memory per stream for its fixed state (the stream, its machine,
 * matchers, scanners and event builder), carved from large slabs on huge pages where the
 * system has them.  A batch step touches a dozen cache lines of each of a thousand
 * streams: spread over the heap they need more page-table entries than the TLB holds;
 * packed a stream to a block on 2 MiB pages they need a few.  See docs/engine.md. */
#ifndef TOOLPARSE_POOL_H
#define TOOLPARSE_POOL_H

#include "common.h"

/* Blocks of one size, learnt from the first stream built in the pool (tp_stream_new_in).
 * Not thread-safe: build and free the streams of one pool from one thread at a time.
 * Free every stream placed in a pool before the pool. */
typedef struct tp_pool tp_pool;

tp_status tp_pool_new(tp_pool **out);
/* tp_pool_new with an allocator (common.h; NULL: the default) for the pool's bookkeeping
 * and, where slabs are not mapped pages of their own (no mmap, or AddressSanitizer's
 * builds, which take each block on its own), for its memory. */
tp_status tp_pool_new_with(const tp_allocator *alloc, tp_pool **out);
void tp_pool_free(tp_pool *pool);

/* The block size (0 until learnt). */
size_t tp_pool_block_size(const tp_pool *pool);
void tp_pool_learn(tp_pool *pool, size_t block_size); /* once; later calls are ignored */
/* A zeroed block of the pool's size, or NULL (no size learnt yet, or no memory). */
void *tp_pool_take(tp_pool *pool);
void tp_pool_give_back(tp_pool *pool, void *block);
/* Blocks taken and not given back. */
size_t tp_pool_live(const tp_pool *pool);

/* Where a constructor puts its structs: the unused part of one block, or nothing (then
 * each struct comes from the heap).  wanted adds up what every take asked for, in cache
 * lines, block or not: a build with an empty place measures the block it needs. */
typedef struct tp_place {
    uint8_t *next, *end;
    size_t wanted;
} tp_place;

/* size zeroed bytes aligned to a cache line: from the place when they fit there
 * (*allocation = NULL), else from alloc (*allocation = what to give back to it; NULL:
 * the default allocator).  place may be NULL (alloc).  NULL when there is no memory. */
void *tp_place_take(const tp_allocator *alloc, tp_place *place, size_t size, void **allocation);

#endif
