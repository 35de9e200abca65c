/* emit.h: the event builder (internal).  Turns the VM's certain, tagged bytes into
 * events: text deltas, tool call start / argument deltas / end, errors.  The twin of
 * python/toolparse/reference/emitter.py. */
#ifndef TOOLPARSE_EMIT_H
#define TOOLPARSE_EMIT_H

#include "buffer.h"
#include "event.h"
#include "parse_limits.h"
#include "pool.h"
#include "program.h" /* the roles and decodings of the tags it is given */
#include "tools.h"

typedef struct tp_emitter tp_emitter;

/* Where events go: an emitter's own, or a batch's output shared by its streams (text
 * offsets are into this arena). */
struct tp_event_out {
    tp_buf events; /* tp_event records */
    tp_buf arena;
};

/* repair: hold each call's arguments until it ends, and report a call whose arguments are
 * not a JSON object, or that the grammar marked repaired, as TP_EV_CALL_REPAIR.  In place
 * where it fits (place may be NULL: pool.h); alloc (not NULL) is copied. */
tp_status tp_emitter_new(const tp_allocator *alloc, const tp_tools *tools, int repair,
                         tp_place *place, tp_emitter **out);
void tp_emitter_free(tp_emitter *e);
void tp_emitter_reset(tp_emitter *e);
/* Limits the emitter enforces (see tp_limits).  Meeting one stops it.  max_depth: the
 * deepest arguments it must take whole (TP_ERR_NOMEM: unchanged). */
tp_status tp_emitter_set_limits(tp_emitter *e, uint32_t max_depth, uint64_t max_argument_bytes,
                                uint64_t max_tool_calls);
/* A limit was met: the emitter ignores everything until reset. */
int tp_emitter_stopped(const tp_emitter *e);
/* Bytes held for the open call: its arguments, a captured name or value. */
size_t tp_emitter_held_bytes(const tp_emitter *e);

/* Events since the last tp_emitter_clear_events (borrowed, like their arena). */
const tp_event *tp_emitter_events(const tp_emitter *e, size_t *count);
const uint8_t *tp_emitter_arena(const tp_emitter *e);
size_t tp_emitter_arena_length(const tp_emitter *e);
void tp_emitter_clear_events(tp_emitter *e);
/* Sends events to out from now on (NULL: the emitter's own, which clear_events clears). */
void tp_emitter_set_output(tp_emitter *e, tp_event_out *out);
/* Asks the cache for what the next text piece touches (no effect on the output). */
void tp_emitter_prefetch(const tp_emitter *e);

tp_status tp_emitter_open(tp_emitter *e, uint32_t role, uint32_t decode, uint64_t pos);
tp_status tp_emitter_text(tp_emitter *e, const uint8_t *data, size_t n);
tp_status tp_emitter_close(tp_emitter *e, uint64_t pos);
/* An error the parse found; msg names the limit when kind is TP_PE_LIMIT (which stops the
 * emitter: nothing more is emitted). */
tp_status tp_emitter_error(tp_emitter *e, uint32_t kind, uint32_t msg, uint64_t offset);
tp_status tp_emitter_abort(tp_emitter *e, uint32_t depth);
/* Whether the open call's tool declares a parameter of this name: 1 also where there is
 * no such call, its tool is unknown or declares no parameters (what a declared_param()
 * lookahead of the grammar asks). */
int tp_emitter_declares(const tp_emitter *e, const uint8_t *name, size_t len);
/* Whether text, where the input ended, may be what is left of a parameter name the open
 * call's tool declares followed by `end` (tp_tools_param_cut); where its tool is unknown
 * or declares no parameters, of any name (no whitespace, no angle bracket); 0 where there
 * is no open call. */
int tp_emitter_declares_cut(const tp_emitter *e, const uint8_t *text, size_t len,
                            const uint8_t *end, size_t end_len);

/* Writes the streamed text kept in the event builder's own line to the buffers it belongs
 * to: the getters below, and anything reading the call's arguments, see it from then on. */
tp_status tp_emitter_unstage(tp_emitter *e);
/* The message so far: all content / reasoning bytes (after tp_emitter_unstage). */
const tp_buf *tp_emitter_content(const tp_emitter *e);
const tp_buf *tp_emitter_reasoning(const tp_emitter *e);
int tp_emitter_any_reasoning(const tp_emitter *e);

#endif
