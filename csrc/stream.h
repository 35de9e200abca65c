/* stream.h: one parse of one model response (tp_stream), its events, and the tool
 * table that types XML-style parameters.  See docs/engine.md. */
#ifndef TOOLPARSE_STREAM_H
#define TOOLPARSE_STREAM_H

#include "common.h"
#include "pool.h"
#include "program.h"
#include "vocab.h"

typedef enum tp_event_kind {
    TP_EV_REASONING = 1,
    TP_EV_CONTENT = 2,
    TP_EV_CALL_START = 3, /* text: name; aux: the id the output carried (may be empty) */
    TP_EV_ARGS = 4,       /* text: the next piece of the arguments JSON */
    TP_EV_CALL_END = 5,   /* text: the whole arguments JSON; aux: name */
    TP_EV_ERROR = 6,      /* code: kind; msg: message; text: detail (a name) */
    TP_EV_CALL_REPAIR = 7 /* repair mode: a call whose arguments need repair; text: its
                           * arguments as written; aux: name; offset: where it ended */
} tp_event_kind;

typedef enum tp_error_kind {
    TP_PE_INCOMPLETE = 0,
    TP_PE_INVALID_ARGUMENTS = 1,
    TP_PE_UNEXPECTED = 2,
    TP_PE_UNKNOWN_TOOL = 3,
    TP_PE_LIMIT = 4
} tp_error_kind;

typedef enum tp_error_message {
    TP_MSG_ENDED_INSIDE_CALL = 0,
    TP_MSG_INVALID_ARGUMENTS = 1,
    TP_MSG_UNEXPECTED = 2,
    TP_MSG_TWO_ARGUMENTS = 3,
    TP_MSG_TWO_NAMES = 4,
    TP_MSG_EMPTY_NAME = 5,
    TP_MSG_UNKNOWN_TOOL = 6,
    TP_MSG_NO_NAME = 7,
    TP_MSG_NOT_AN_OBJECT = 8,
    TP_MSG_LIMIT = 9,          /* the grammar made no progress for too many steps */
    TP_MSG_LIMIT_DEPTH = 10,   /* the limits of tp_limits, in its order */
    TP_MSG_LIMIT_ARGUMENT = 11,
    TP_MSG_LIMIT_PENDING = 12,
    TP_MSG_LIMIT_CALLS = 13,
    TP_MSG_LIMIT_STREAM = 14
} tp_error_message;

/* Per-stream resource limits.  Exceeding one ends the parse: a TP_PE_LIMIT error naming
 * it (the message id), nothing after it, the input after it ignored, the memory held for
 * the undecided input and the open call released; what was complete before stands. */
typedef struct tp_limits {
    uint32_t max_depth;          /* JSON nesting, 1..TP_JSON_MAX_DEPTH_CEILING */
    uint64_t max_argument_bytes; /* one call's arguments JSON, or one captured name/value */
    uint64_t max_pending_bytes;  /* output held while the parse cannot decide yet */
    uint64_t max_tool_calls;     /* calls per message */
    uint64_t max_stream_bytes;   /* all output; 0: no limit */
} tp_limits;

#define TP_DEFAULT_MAX_DEPTH 128u
#define TP_DEFAULT_MAX_ARGUMENT_BYTES (1u << 20)
#define TP_DEFAULT_MAX_PENDING_BYTES (2u << 20)
#define TP_DEFAULT_MAX_TOOL_CALLS 256u

void tp_limits_default(tp_limits *limits);

typedef struct tp_event {
    uint32_t kind;
    int32_t index; /* call index, or -1 */
    uint32_t text_off, text_len; /* in the arena */
    uint32_t aux_off, aux_len;
    uint32_t code, msg;
    uint64_t offset; /* errors: the stream offset */
} tp_event;

/* Parameter types, in the order of a JSON schema's "type" list. */
enum {
    TP_TYPE_STRING, TP_TYPE_INTEGER, TP_TYPE_NUMBER, TP_TYPE_BOOLEAN,
    TP_TYPE_OBJECT, TP_TYPE_ARRAY, TP_TYPE_NULL, TP_TYPE_OTHER,
    TP_TYPE_JSON /* any JSON value: the output stated it (not a schema type) */
};

typedef struct tp_tools tp_tools;

/* Loads a tool table blob: u32 n_tools; per tool: name (u32 length, bytes), u32 n_params;
 * per parameter: name, u32 n_types, n_types u32 type codes.  Then, optionally, for every
 * parameter in the same order: u32 length and its schema node (m3value.h: types,
 * properties and items, for nested values; length 0: none).  Immutable; share it.
 * Caller frees with tp_tools_free(). */
tp_status tp_tools_new(const uint8_t *blob, size_t len, tp_tools **out);
void tp_tools_free(tp_tools *t);
/* The tool's index, or -1. */
int32_t tp_tools_find(const tp_tools *t, const uint8_t *name, size_t len);
/* The types of a tool's parameter (NULL, 0 when unknown). */
const uint32_t *tp_tools_param_types(const tp_tools *t, int32_t tool, const uint8_t *name,
                                     size_t len, uint32_t *n_types);
/* The schema node of a tool's parameter (NULL, 0 when unknown or the blob has none). */
const uint8_t *tp_tools_param_schema(const tp_tools *t, int32_t tool, const uint8_t *name,
                                     size_t len, size_t *node_len);

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
                           const tp_tools *tools, uint32_t flags, tp_pool *pool,
                           tp_stream **out);
void tp_stream_free(tp_stream *s);
void tp_stream_reset(tp_stream *s);

/* Feeds bytes; the events they made certain are then in tp_stream_events (borrowed, valid
 * until the next call on s).  TP_ERR_NOMEM leaves the stream unusable but safe to free. */
tp_status tp_stream_feed(tp_stream *s, const uint8_t *buf, size_t len);

/* Feeds the bytes of n token ids from vocab, as one piece.  An id outside the vocab is
 * TP_ERR_ARG before anything is fed (*bad_id, if not NULL, gets it). */
tp_status tp_stream_feed_tokens(tp_stream *s, const tp_vocab *vocab, const uint32_t *ids,
                                size_t n, uint32_t *bad_id);

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
typedef struct tp_event_out tp_event_out;
void tp_stream_set_output(tp_stream *s, tp_event_out *out);
/* Whether tp_stream_finish was called (since the last reset). */
int tp_stream_is_finished(const tp_stream *s);

/* The message so far (borrowed until the next call on the stream).  Streamed text reaches
 * these buffers a few pieces at a time (see emit.c), so reading them first writes out what
 * is pending: TP_ERR_NOMEM when that fails. */
tp_status tp_stream_content(tp_stream *s, const uint8_t **data, size_t *len);
tp_status tp_stream_reasoning(tp_stream *s, const uint8_t **data, size_t *len, int *present);

#endif
