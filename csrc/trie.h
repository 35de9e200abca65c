/* trie.h: marker automaton (Aho-Corasick over bytes) with leftmost-longest,
 * non-overlapping streaming matches and holdback.  See docs/primitives.md. */
#ifndef TOOLPARSE_TRIE_H
#define TOOLPARSE_TRIE_H

#include "common.h"
#include "pool.h"

#define TP_TRIE_MAX_MARKERS 4096
#define TP_TRIE_MAX_MARKER_LEN 256

typedef struct tp_trie tp_trie;       /* immutable once built; share freely across threads */
typedef struct tp_matcher tp_matcher; /* one per stream */

typedef struct tp_match {
    uint32_t id;    /* index of the marker in the list given to tp_trie_new */
    uint64_t start; /* absolute stream offset of the first byte */
    uint64_t end;   /* absolute stream offset just past the last byte */
} tp_match;

/* Builds the automaton from n markers (1..TP_TRIE_MAX_MARKERS), each 1..TP_TRIE_MAX_MARKER_LEN
 * bytes, no duplicates.  On TP_ERR_ARG, *bad_index (if not NULL) names the offending marker
 * (n for a bad count).  Caller frees *out with tp_trie_free(). */
tp_status tp_trie_new(const uint8_t *const *markers, const size_t *lens, size_t n, tp_trie **out,
                      size_t *bad_index);
/* tp_trie_new with an allocator (common.h; NULL: the default). */
tp_status tp_trie_new_with(const tp_allocator *alloc, const uint8_t *const *markers,
                           const size_t *lens, size_t n, tp_trie **out, size_t *bad_index);
void tp_trie_free(tp_trie *trie); /* NULL-safe */

size_t tp_trie_count(const tp_trie *trie);
size_t tp_trie_max_length(const tp_trie *trie);
/* Borrowed: valid while trie lives. */
const uint8_t *tp_trie_marker(const tp_trie *trie, size_t id, size_t *len);

/* The matcher borrows trie, which must outlive it.  Caller frees with tp_matcher_free(). */
tp_status tp_matcher_new(const tp_trie *trie, tp_matcher **out);
/* tp_matcher_new with the matcher in place when it fits there (pool.h). */
tp_status tp_matcher_new_in(const tp_trie *trie, tp_place *place, tp_matcher **out);
/* Either, with an allocator (common.h; NULL: the default); place may be NULL. */
tp_status tp_matcher_new_with(const tp_allocator *alloc, const tp_trie *trie, tp_place *place,
                              tp_matcher **out);
void tp_matcher_free(tp_matcher *m); /* NULL-safe */
void tp_matcher_reset(tp_matcher *m);

/* Feeds len bytes.  Writes up to cap certain matches to out and sets *n_out; returns the
 * number of bytes of buf consumed.  When *n_out < cap, all of len was consumed and every
 * certain match was reported.  When *n_out == cap, out filled up: call again with the rest
 * (buf + consumed, which may be empty) and a fresh out until *n_out < cap.  With cap == 0
 * nothing is consumed.  Never fails; a finished matcher consumes nothing. */
size_t tp_matcher_feed(tp_matcher *m, const uint8_t *buf, size_t len, tp_match *out, size_t cap,
                       size_t *n_out);
/* Ends the input: decides held matches.  Writes up to cap to out.  TP_ERR_NOSPACE means
 * out filled up before the end was reached: call again (the next call may find no more
 * matches).  After it returns TP_OK the matcher is finished. */
tp_status tp_matcher_finish(tp_matcher *m, tp_match *out, size_t cap, size_t *n_out);

/* Whether the matcher would pass over all len bytes without any marker starting: 0
 * unless it is idle (nothing held, no match pending).  Then tp_matcher_skip(m, len) has
 * the effect of feeding them. */
int tp_matcher_all_plain(const tp_matcher *m, const uint8_t *buf, size_t len);
void tp_matcher_skip(tp_matcher *m, size_t n);

int tp_matcher_finished(const tp_matcher *m);
uint64_t tp_matcher_position(const tp_matcher *m); /* bytes fed */
size_t tp_matcher_holdback(const tp_matcher *m);

#endif
