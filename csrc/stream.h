/* stream.h: one parse of one model response (tp_stream): a VM feeding an event builder.
 * Its events are event.h's, its limits parse_limits.h's, its tool table tools.h's.  See
 * docs/engine.md. */
#ifndef TOOLPARSE_STREAM_H
#define TOOLPARSE_STREAM_H

#include "common.h"
#include "event.h"
#include "parse_limits.h"
#include "pool.h"
#include "program.h"
#include "tools.h"
#include "vocab.h"

typedef struct tp_stream tp_stream;

/* tools may be NULL (no tool list given: every name is accepted, values are strings).
 * program and tools must outlive the stream.  Caller frees with tp_stream_free(). */
#define TP_STREAM_REPAIR 1u /* hold each call's arguments; report calls to repair */

tp_status tp_stream_new(const tp_program *program, const char *entry, size_t entry_len,
                        const tp_tools *tools, uint32_t flags, tp_stream **out);
/* tp_stream_new with the stream's fixed state in one block of pool (the first stream built
 * in a pool sets its block size): for many streams fed in turn, as a batch does.  The pool
 * must outlive the stream; tp_stream_free gives the block back. */
tp_status tp_stream_new_in(const tp_program *program, const char *entry, size_t entry_len,
                           const tp_tools *tools, uint32_t flags, tp_pool *pool, tp_stream **out);
/* Either, with an allocator (common.h; NULL: the default) for everything of the stream's
 * own (a pool's block is the pool's); pool may be NULL. */
tp_status tp_stream_new_with(const tp_allocator *alloc, const tp_program *program,
                             const char *entry, size_t entry_len, const tp_tools *tools,
                             uint32_t flags, tp_pool *pool, tp_stream **out);
void tp_stream_free(tp_stream *s); /* NULL-safe */
void tp_stream_reset(tp_stream *s);

/* Feeds bytes; the events they made certain are then in tp_stream_events (borrowed, valid
 * until the next call on s).  TP_ERR_NOMEM leaves the stream unusable but safe to free. */
tp_status tp_stream_feed(tp_stream *s, const uint8_t *buf, size_t len);

/* Feeds the bytes of n token ids from vocab, as one piece.  An id outside the vocab is
 * TP_ERR_ARG before anything is fed (*bad_id, if not NULL, gets it). */
tp_status tp_stream_feed_tokens(tp_stream *s, const tp_vocab *vocab, const uint32_t *ids, size_t n,
                                uint32_t *bad_id);

/* Special-token markers for streams fed token ids: flags[i] != 0 says program string i is
 * the text of a special token, which then matches only where the vocab's special token
 * was fed; the same characters fed as ordinary tokens (or as text) stay text.  NULL
 * turns it off (the default). */
tp_status tp_stream_set_special(tp_stream *s, const uint8_t *flags, uint32_t n_strings);
/* Sets the stream's limits (before its first feed, or after a reset: else TP_ERR_STATE;
 * a limit out of its range: TP_ERR_ARG).  A new stream has tp_limits_default's. */
tp_status tp_stream_set_limits(tp_stream *s, const tp_limits *limits);
/* Bytes the stream holds for input it has not decided yet and for the open call (its
 * arguments, a captured name or value): what the limits bound. */
size_t tp_stream_held_bytes(const tp_stream *s);
/* The end of the response; cut_short when it was cut off (finish reason "length"). */
tp_status tp_stream_finish(tp_stream *s, int cut_short);
const tp_event *tp_stream_events(const tp_stream *s, size_t *count, const uint8_t **arena);
/* How many bytes of the arena the events' offsets index. */
size_t tp_stream_arena_length(const tp_stream *s);
/* Ask the cache for what feeding s touches, in two stages a few streams apart (the
 * second reads what the first fetched): for callers that feed many streams in turn. */
void tp_stream_prefetch(const tp_stream *s);
void tp_stream_prefetch_state(const tp_stream *s);
/* Sends s's events (and their text) to out instead of its own list, until called with
 * NULL: a batch collects many streams' events in one place without copying them.  The own
 * list (tp_stream_events) is neither cleared nor filled meanwhile. */
void tp_stream_set_output(tp_stream *s, tp_event_out *out);
/* Whether tp_stream_finish was called (since the last reset). */
int tp_stream_is_finished(const tp_stream *s);

/* The message so far (borrowed until the next call on the stream).  Streamed text reaches
 * these buffers a few pieces at a time (see emit.c), so reading them first writes out what
 * is pending: TP_ERR_NOMEM when that fails. */
tp_status tp_stream_content(tp_stream *s, const uint8_t **data, size_t *len);
tp_status tp_stream_reasoning(tp_stream *s, const uint8_t **data, size_t *len, int *present);

#endif
