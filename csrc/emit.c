/* emit.c: the event builder; the twin of python/toolparse/reference/emitter.py. */
#include "emit.h"

#include <stddef.h>

#include "gemmavalue.h"
#include "json.h"
#include "m3value.h"
#include "pyliteral.h"
#include "text.h"

/* Where a streamed JSON string token is (text written as "...", decoded as it comes). */
enum { JS_BEFORE, JS_IN, JS_ESCAPE, JS_HEX, JS_DONE };

typedef struct frame {
    uint8_t role, decode, held_len;
    uint8_t held[4];   /* incomplete UTF-8 tail of streamed text */
    size_t cap_start;  /* where this frame's captured bytes begin in e->capture */
    uint8_t js_phase, js_hex_left;
    uint32_t js_code, js_high; /* a \u escape so far; a high surrogate awaiting its pair */
} frame;

typedef struct call_state {
    /* what an argument piece reads first (see struct tp_emitter) */
    int active, dead;
    int32_t index, tool;
    tp_buf args, pending;
    int has_args, has_name, in_param, param_streams;
    int in_value, value_cut; /* a parameter's value is open; the end of the output cut it */
    int begun; /* the arguments have begun: the call is announced once named */
    int repaired; /* the grammar salvaged the call (its closing was cut off) */
    int missing_opener; /* it was written without its opening marker (repair grammars) */
    int missing_closer; /* a closing tag was left out in mid-output (repair grammars) */
    int unfit; /* repair: a value that fit none of its types went in as a JSON string */
    uint32_t params, n_ptypes;
    const uint32_t *ptypes;
    int pknown;             /* the parameter is in the tool's schema */
    const uint8_t *pschema; /* its schema node (NULL: none), for nested values */
    size_t pschema_len;
    tp_buf name, carried_id;
    tp_buf pname; /* the open parameter's name, for an error about its value */
} call_state;

/* Bytes of streamed text the event builder keeps in its first cache line before writing
 * them to the buffer they belong to (content, reasoning or the call's arguments).  A batch
 * step appends a few bytes to thousands of streams' text, whose buffers lie on as many
 * pages: writing each buffer once per this many bytes spares most of those page lookups. */
#define STAGE_CAP 33

/* Frames the event builder holds in its own storage; deeper nesting allocates. */
#define INLINE_FRAMES 8

struct tp_emitter {
    /* What streaming a piece of text reads and writes comes first: content and reasoning
     * in the first cache line, arguments in the second.  A batch touches thousands of
     * streams per step, and each line is a likely miss. */
    tp_event_out *out; /* &own, or a batch's */
    frame *frames;
    tp_buf *staged_for; /* where the staged bytes belong (NULL: nothing is staged) */
    uint32_t depth;
    uint8_t stopped; /* a limit was met */
    uint8_t repair;  /* repair mode: arguments are held, salvageable calls reported */
    uint8_t staged;
    uint8_t stage[STAGE_CAP];
    uint64_t max_argument_bytes;
    call_state call; /* (its first fields share the second line with the limit above) */
    /* the rest */
    tp_buf content, reasoning;
    int any_reasoning;
    uint64_t max_tool_calls;
    tp_event_out own;
    const tp_tools *tools;
    size_t frames_cap;
    tp_buf capture;
    int32_t next_index;
    uint64_t offset;  /* stream offset of the tag opening or closing now */
    tp_json *scanner; /* for typing parameter values */
    /* Scratch for one piece of streamed text (escaped, decoded, joined to held bytes),
     * kept between feeds so that no feed allocates. */
    tp_buf escaped, decoded, joined;
    frame first_frames[INLINE_FRAMES]; /* the frames until more are open: no allocation */
    tp_vec deep_frames; /* the frames once more are open (frames then points here) */
    void *allocation; /* what to free: where its aligned storage begins (NULL: placed) */
    tp_allocator alloc;
};

/* The stage fills the first line exactly. */
typedef char
    stage_fills_line[offsetof(struct tp_emitter, stage) + STAGE_CAP == TP_CACHE_LINE ? 1 : -1];

/* Bigger scratch than this (a huge feed) is given back after use. */
#define SCRATCH_KEEP 65536

static void scratch_done(tp_buf *b) {
    b->len = 0;
    if (b->cap > SCRATCH_KEEP) tp_buf_free(b);
}

static const uint32_t string_only[1] = {TP_TYPE_STRING};
static const uint32_t json_only[1] = {TP_TYPE_JSON};

/* Every buffer of e grows through e's allocator. */
static void bind_buffers(tp_emitter *e) {
    tp_buf *const bufs[] = {&e->call.args,  &e->call.pending, &e->call.name, &e->call.carried_id,
                            &e->call.pname, &e->content,      &e->reasoning, &e->own.events,
                            &e->own.arena,  &e->capture,      &e->escaped,   &e->decoded,
                            &e->joined,     &e->deep_frames};
    size_t k;
    for (k = 0; k < sizeof bufs / sizeof *bufs; k++) bufs[k]->alloc = &e->alloc;
}

tp_status tp_emitter_new(const tp_allocator *alloc, const tp_tools *tools, int repair,
                         tp_place *place, tp_emitter **out) {
    /* aligned, so that the fields streaming text touches share as few lines as they can */
    void *allocation;
    tp_emitter *e = (tp_emitter *)tp_place_take(alloc, place, sizeof(tp_emitter), &allocation);
    if (!e) return TP_ERR_NOMEM;
    e->allocation = allocation;
    e->alloc = *alloc;
    bind_buffers(e);
    e->out = &e->own;
    e->frames = e->first_frames;
    e->frames_cap = INLINE_FRAMES;
    e->tools = tools;
    e->repair = repair != 0;
    e->max_argument_bytes = TP_DEFAULT_MAX_ARGUMENT_BYTES;
    e->max_tool_calls = TP_DEFAULT_MAX_TOOL_CALLS;
    if (tp_json_new_with(alloc, TP_JSON_STRICT, TP_JSON_DEFAULT_MAX_DEPTH, place, &e->scanner) !=
        TP_OK) {
        tp_free(alloc, allocation);
        return TP_ERR_NOMEM;
    }
    tp_emitter_reset(e);
    *out = e;
    return TP_OK;
}

/* Writes the staged bytes to the buffer they belong to. */
static tp_status unstage(tp_emitter *e) {
    if (e->staged) {
        TP_TRY(tp_buf_append(e->staged_for, e->stage, e->staged));
        e->staged = 0;
    }
    e->staged_for = NULL;
    return TP_OK;
}

/* stage_append where the stage is another buffer's or full. */
static tp_status restage(tp_emitter *e, tp_buf *b, const uint8_t *text, size_t n) {
    TP_TRY(unstage(e));
    if (n > STAGE_CAP) return tp_buf_append(b, text, n);
    e->staged_for = b;
    memcpy(e->stage, text, n);
    e->staged = (uint8_t)n;
    return TP_OK;
}

/* Appends streamed text to b (content, reasoning or arguments) through the stage. */
static inline tp_status stage_append(tp_emitter *e, tp_buf *b, const uint8_t *text, size_t n) {
    if (TP_UNLIKELY(e->staged_for != b || n > (size_t)(STAGE_CAP - e->staged)))
        return restage(e, b, text, n);
    tp_copy_short(e->stage + e->staged, text, n);
    e->staged += (uint8_t)n;
    return TP_OK;
}

/* Bytes of b, staged ones included. */
static size_t staged_length(const tp_emitter *e, const tp_buf *b) {
    return b->len + (e->staged_for == b ? e->staged : 0);
}

tp_status tp_emitter_unstage(tp_emitter *e) { return unstage(e); }

/* The marks of a call's end event (csrc/event.h): 2, 4 and 8. */
static uint32_t call_marks(const call_state *c) {
    return (uint32_t)c->missing_opener << 1 | (uint32_t)c->unfit << 2 |
           (uint32_t)c->missing_closer << 3;
}

static void call_clear(tp_emitter *e) {
    call_state *c = &e->call;
    if (e->staged_for == &c->args) { /* the last call's: let go */
        e->staged = 0;
        e->staged_for = NULL;
    }
    c->active = c->dead = c->has_args = c->has_name = c->in_param = c->param_streams = 0;
    c->in_value = c->value_cut = 0;
    c->begun = c->repaired = c->missing_opener = c->missing_closer = c->unfit = 0;
    c->index = -1;
    c->tool = -1;
    c->params = 0;
    c->ptypes = string_only;
    c->n_ptypes = 1;
    c->pknown = 0;
    c->pschema = NULL;
    c->pschema_len = 0;
    c->name.len = c->carried_id.len = c->args.len = c->pending.len = c->pname.len = 0;
}

void tp_emitter_reset(tp_emitter *e) {
    e->depth = 0;
    e->capture.len = 0;
    call_clear(e);
    e->staged = 0;
    e->staged_for = NULL;
    e->next_index = 0;
    e->content.len = e->reasoning.len = 0;
    e->any_reasoning = 0;
    e->offset = 0;
    e->own.events.len = e->own.arena.len = 0;
    e->stopped = 0;
}

tp_status tp_emitter_set_limits(tp_emitter *e, uint32_t max_depth, uint64_t max_argument_bytes,
                                uint64_t max_tool_calls) {
    /* the scanner that checks a whole call's arguments takes the depth the machine's
     * scanners let through (never less than its own default, which typed values need) */
    if (max_depth > tp_json_depth_room(e->scanner)) {
        tp_json *deeper;
        if (tp_json_new_with(&e->alloc, TP_JSON_STRICT, max_depth, NULL, &deeper) != TP_OK)
            return TP_ERR_NOMEM;
        tp_json_free(e->scanner);
        e->scanner = deeper;
    }
    e->max_argument_bytes = max_argument_bytes;
    e->max_tool_calls = max_tool_calls;
    return TP_OK;
}

int tp_emitter_stopped(const tp_emitter *e) { return e->stopped; }

size_t tp_emitter_held_bytes(const tp_emitter *e) {
    const call_state *c = &e->call;
    return e->capture.len + staged_length(e, &c->args) + c->pending.len + c->name.len +
           c->carried_id.len;
}

void tp_emitter_free(tp_emitter *e) {
    tp_allocator a;
    if (!e) return;
    tp_vec_free(&e->deep_frames);
    tp_buf_free(&e->capture);
    tp_buf_free(&e->call.name);
    tp_buf_free(&e->call.carried_id);
    tp_buf_free(&e->call.pname);
    tp_buf_free(&e->call.args);
    tp_buf_free(&e->call.pending);
    tp_buf_free(&e->content);
    tp_buf_free(&e->reasoning);
    tp_buf_free(&e->own.events);
    tp_buf_free(&e->own.arena);
    tp_buf_free(&e->escaped);
    tp_buf_free(&e->decoded);
    tp_buf_free(&e->joined);
    tp_json_free(e->scanner);
    a = e->alloc;
    tp_free(&a, e->allocation);
}

const tp_event *tp_emitter_events(const tp_emitter *e, size_t *count) {
    *count = e->own.events.len / sizeof(tp_event);
    return (const tp_event *)(const void *)e->own.events.data;
}

const uint8_t *tp_emitter_arena(const tp_emitter *e) { return e->own.arena.data; }
size_t tp_emitter_arena_length(const tp_emitter *e) { return e->own.arena.len; }

void tp_emitter_prefetch(const tp_emitter *e) {
    if (e->depth) TP_PREFETCH(&e->frames[e->depth - 1]);
    if (e->staged > STAGE_CAP - 8 && e->staged_for->data) /* about to be written out */
        TP_PREFETCH(e->staged_for->data + e->staged_for->len);
    /* the own list, where a stream's events go unless a batch's shared output (in the
     * cache already) is set for its feed; a stream never fed alone has none */
    if (e->own.events.data) TP_PREFETCH(e->own.events.data + e->own.events.len);
    if (e->own.arena.data) TP_PREFETCH(e->own.arena.data + e->own.arena.len);
}

void tp_emitter_clear_events(tp_emitter *e) {
    /* (a batch's output is the batch's to clear: then the own list's line stays untouched) */
    if (e->out == &e->own) e->own.events.len = e->own.arena.len = 0;
}

void tp_emitter_set_output(tp_emitter *e, tp_event_out *out) { e->out = out ? out : &e->own; }

const tp_buf *tp_emitter_content(const tp_emitter *e) { return &e->content; }
const tp_buf *tp_emitter_reasoning(const tp_emitter *e) { return &e->reasoning; }
int tp_emitter_any_reasoning(const tp_emitter *e) { return e->any_reasoning; }

/* -- events ----------------------------------------------------------------------------- */

/* The next event record, filled in, its text and aux to come next in the arena (the
 * caller has made room for the record and for both). */
static inline tp_event *add_event(tp_event_out *o, uint32_t kind, int32_t index, size_t text_len,
                                  size_t aux_len) {
    tp_event *ev = (tp_event *)(void *)(o->events.data + o->events.len);
    o->events.len += sizeof *ev;
    ev->kind = kind;
    ev->index = index;
    ev->text_off = (uint32_t)o->arena.len;
    ev->text_len = (uint32_t)text_len;
    ev->aux_off = (uint32_t)(o->arena.len + text_len);
    ev->aux_len = (uint32_t)aux_len;
    ev->code = ev->msg = 0;
    ev->offset = 0;
    return ev;
}

static tp_status push_event(tp_emitter *e, uint32_t kind, int32_t index, const uint8_t *text,
                            size_t text_len, const uint8_t *aux, size_t aux_len, tp_event **out) {
    tp_event_out *o = e->out;
    tp_event *ev;
    size_t size = text_len + aux_len;
    if (size > UINT32_MAX - o->arena.len || tp_buf_reserve(&o->arena, size) != TP_OK ||
        tp_buf_reserve(&o->events, sizeof *ev) != TP_OK)
        return TP_ERR_NOMEM;
    ev = add_event(o, kind, index, text_len, aux_len);
    if (text_len) memcpy(o->arena.data + o->arena.len, text, text_len);
    if (aux_len) memcpy(o->arena.data + o->arena.len + text_len, aux, aux_len);
    o->arena.len += size;
    if (out) *out = ev;
    return TP_OK;
}

/* push_event for a piece of streamed text (no aux), the event of nearly every feed:
 * straight stores where the output has room. */
static inline tp_status push_text(tp_emitter *e, uint32_t kind, int32_t index, const uint8_t *text,
                                  size_t n) {
    tp_event_out *o = e->out;
    if (TP_UNLIKELY(o->events.cap - o->events.len < sizeof(tp_event) ||
                    o->arena.cap - o->arena.len < n || n > UINT32_MAX - o->arena.len))
        return push_event(e, kind, index, text, n, NULL, 0, NULL);
    add_event(o, kind, index, n, 0);
    tp_copy_short(o->arena.data + o->arena.len, text, n);
    o->arena.len += n;
    return TP_OK;
}

static tp_status push_error(tp_emitter *e, uint32_t kind, uint32_t msg, int32_t index,
                            uint64_t offset, const uint8_t *detail, size_t detail_len) {
    tp_event *ev;
    TP_TRY(push_event(e, TP_EV_ERROR, index, detail, detail_len, NULL, 0, &ev));
    ev->code = kind;
    ev->msg = msg;
    ev->offset = offset;
    return TP_OK;
}

/* A limit was met: report it (msg names it), then emit nothing more and let go of what
 * the open call held. */
static tp_status stop_at_limit(tp_emitter *e, uint32_t msg) {
    call_state *c = &e->call;
    int32_t index = c->active && !c->dead ? c->index : -1;
    TP_TRY(unstage(e));
    TP_TRY(push_error(e, TP_PE_LIMIT, msg, index, e->offset, NULL, 0));
    e->stopped = 1;
    e->depth = 0;
    c->active = 0;
    tp_buf_free(&c->args);
    tp_buf_free(&c->pending);
    tp_buf_free(&c->name);
    tp_buf_free(&c->carried_id);
    tp_buf_free(&c->pname);
    tp_buf_free(&e->capture);
    return TP_OK;
}

/* The longest start of a UTF-8 text that ends on a character boundary and is at most max
 * bytes long. */
static size_t whole_characters(const uint8_t *text, size_t n, size_t max) {
    if (n <= max) return n;
    while (max > 0 && (text[max] & 0xC0) == 0x80) max--;
    return max;
}

/* -- the call --------------------------------------------------------------------------- */

static tp_status call_error(tp_emitter *e, uint32_t kind, uint32_t msg, const uint8_t *detail,
                            size_t detail_len) {
    if (e->stopped) return TP_OK; /* a limit ended the call and everything after it */
    if (e->call.dead) return TP_OK; /* reported once: the rest of the call is dropped */
    e->call.dead = 1;
    return push_error(e, kind, msg, e->call.index, e->offset, detail, detail_len);
}

static tp_status args(tp_emitter *e, const uint8_t *text, size_t n);

/* More arguments than the limit leaves room for: what fits goes out, then the limit (the
 * same at any chunking). */
static TP_NOINLINE tp_status args_past_limit(tp_emitter *e, const uint8_t *text, size_t n,
                                             size_t room) {
    size_t fits = whole_characters(text, n, room);
    if (fits) TP_TRY(args(e, text, fits));
    return stop_at_limit(e, TP_MSG_LIMIT_ARGUMENT);
}

static inline tp_status args(tp_emitter *e, const uint8_t *text, size_t n) {
    call_state *c = &e->call;
    size_t held, room;
    if (!c->active || c->dead || n == 0) return TP_OK;
    held = staged_length(e, &c->args);
    room = e->max_argument_bytes > held ? (size_t)(e->max_argument_bytes - held) : 0;
    if (TP_UNLIKELY(n > room)) return args_past_limit(e, text, n, room);
    TP_TRY(stage_append(e, &c->args, text, n));
    if (e->repair) return TP_OK; /* held: sent whole (or repaired) when the call ends */
    if (c->index < 0) return tp_buf_append(&c->pending, text, n);
    return push_text(e, TP_EV_ARGS, c->index, text, n);
}

static tp_status args_str(tp_emitter *e, const char *text) {
    return args(e, (const uint8_t *)text, strlen(text));
}

/* Content or reasoning: to the message and out as an event. */
static inline tp_status message_text(tp_emitter *e, int reasoning, const uint8_t *text, size_t n) {
    TP_TRY(stage_append(e, reasoning ? &e->reasoning : &e->content, text, n));
    return push_text(e, reasoning ? TP_EV_REASONING : TP_EV_CONTENT, -1, text, n);
}

static tp_status stream_text(tp_emitter *e, const frame *f, const uint8_t *text, size_t n) {
    switch (f->role) {
    case TP_ROLE_REASONING:
    case TP_ROLE_CONTENT:
        return message_text(e, f->role == TP_ROLE_REASONING, text, n);
    case TP_ROLE_TOOL_ARGS:
        return args(e, text, n);
    default: { /* a string parameter: the inside of a JSON string */
        tp_status st = tp_json_escape_append(&e->escaped, text, n);
        if (st == TP_OK) st = args(e, e->escaped.data, e->escaped.len);
        scratch_done(&e->escaped);
        return st;
    }
    }
}

static tp_status announce(tp_emitter *e);

static int captures(uint32_t role) {
    return role == TP_ROLE_TOOL_NAME || role == TP_ROLE_TOOL_ID || role == TP_ROLE_PARAM_NAME;
}

static int streams(const tp_emitter *e, const frame *f) {
    if (f->role == TP_ROLE_REASONING || f->role == TP_ROLE_CONTENT || f->role == TP_ROLE_TOOL_ARGS)
        return 1;
    return f->role == TP_ROLE_PARAM_VALUE && e->call.active && e->call.in_param &&
           e->call.param_streams;
}

tp_status tp_emitter_open(tp_emitter *e, uint32_t role, uint32_t decode, uint64_t pos) {
    frame *f;
    call_state *c = &e->call;
    if (e->stopped) return TP_OK;
    e->offset = pos;
    if (e->depth == e->frames_cap) { /* deeper than the frames at hand: on to the heap */
        TP_TRY(tp_vec_reserve(&e->deep_frames, sizeof(frame), e->frames_cap + 1));
        if (e->frames == e->first_frames)
            memcpy(e->deep_frames.data, e->first_frames, sizeof e->first_frames);
        e->frames = (frame *)(void *)e->deep_frames.data;
        e->frames_cap = e->deep_frames.cap;
    }
    f = &e->frames[e->depth++];
    f->role = (uint8_t)role;
    f->decode = (uint8_t)decode;
    f->held_len = 0;
    f->cap_start = e->capture.len;
    f->js_phase = JS_BEFORE;
    f->js_hex_left = 0;
    f->js_code = f->js_high = 0;
    if (role == TP_ROLE_REASONING) {
        e->any_reasoning = 1;
    } else if (role == TP_ROLE_TOOL_CALL) {
        call_clear(e);
        c->active = 1;
    } else if (c->active && role == TP_ROLE_TOOL_ARGS) {
        if (c->has_args || c->params)
            TP_TRY(call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_TWO_ARGUMENTS, NULL, 0));
        c->has_args = c->begun = 1;
        TP_TRY(announce(e));
    } else if (c->active && role == TP_ROLE_MISSING_OPENER) {
        c->missing_opener = 1;
    } else if (c->active && role == TP_ROLE_MISSING_CLOSER) {
        c->missing_closer = 1;
    } else if (c->active && role == TP_ROLE_REPAIRED) {
        c->repaired = 1;
        if (c->in_value) c->value_cut = 1;
    } else if (c->active && role == TP_ROLE_PARAM_NAME) {
        c->begun = 1;
        TP_TRY(announce(e));
    } else if (c->active && role == TP_ROLE_PARAM_VALUE) {
        if (decode == TP_DECODE_STRING || decode == TP_DECODE_JSON) {
            /* the output states the value's type */
            c->ptypes = decode == TP_DECODE_STRING ? string_only : json_only;
            c->n_ptypes = 1;
            c->param_streams = decode == TP_DECODE_STRING;
        } else if (decode == TP_DECODE_PYTHON || decode == TP_DECODE_GEMMA ||
                   decode == TP_DECODE_FUNCTIONGEMMA) {
            c->param_streams = 0; /* converted whole, at its end */
        } else if (decode == TP_DECODE_MINIMAX_M3 && !c->pknown) {
            c->param_streams = 0; /* its tags say what it is: converted at its end */
        }
        if (c->in_param && c->param_streams) TP_TRY(args_str(e, "\""));
        c->in_value = c->in_param;
        c->value_cut = 0;
    }
    return TP_OK;
}

/* Streams data, holding back an incomplete character at its end (at most 3 bytes). */
static tp_status stream_whole(tp_emitter *e, frame *f, const uint8_t *data, size_t n) {
    size_t tail;
    if (f->held_len) f->held_len = 0; /* it is in data now (a clean line stays clean) */
    if (data[n - 1] < 0x80) return stream_text(e, f, data, n); /* the common piece */
    tail = tp_utf8_tail(data, n);
    if (tail > 3) tail = 3;
    if (n > tail) TP_TRY(stream_text(e, f, data, n - tail));
    memcpy(f->held, data + n - tail, tail);
    f->held_len = (uint8_t)tail;
    return TP_OK;
}

/* A high surrogate escape that no low one followed stands for U+FFFD. */
static tp_status js_flush_high(frame *f, tp_buf *out) {
    if (!f->js_high) return TP_OK;
    f->js_high = 0;
    return tp_utf8_append(out, 0xFFFD);
}

/* One decoded code point of a streamed JSON string; a surrogate escape waits for its
 * pair, and one without a pair becomes U+FFFD. */
static tp_status js_code_point(frame *f, tp_buf *out, uint32_t cp) {
    if (cp >= 0xDC00 && cp <= 0xDFFF && f->js_high) {
        cp = 0x10000 + ((f->js_high - 0xD800) << 10) + (cp - 0xDC00);
        f->js_high = 0;
        return tp_utf8_append(out, cp);
    }
    TP_TRY(js_flush_high(f, out));
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        f->js_high = cp;
        return TP_OK;
    }
    return tp_utf8_append(out, cp >= 0xDC00 && cp <= 0xDFFF ? 0xFFFD : cp);
}

/* Decodes the next piece of a JSON string token onto out: the characters of its value,
 * without the quotes (anything after the closing quote is ignored). */
static tp_status js_decode(frame *f, tp_buf *out, const uint8_t *s, size_t n) {
    size_t k = 0;
    while (k < n) {
        uint8_t b = s[k++];
        switch (f->js_phase) {
        case JS_BEFORE:
            if (b == '"') f->js_phase = JS_IN;
            break;
        case JS_IN:
            if (b == '"' || b == '\\') {
                f->js_phase = b == '"' ? JS_DONE : JS_ESCAPE;
                if (b == '"') TP_TRY(js_flush_high(f, out));
                break;
            }
            TP_TRY(js_flush_high(f, out));
            {
                size_t run = k - 1;
                while (k < n && s[k] != '"' && s[k] != '\\') k++;
                TP_TRY(tp_buf_append(out, s + run, k - run));
            }
            break;
        case JS_ESCAPE:
            f->js_phase = JS_IN;
            if (b == 'u') {
                f->js_phase = JS_HEX;
                f->js_hex_left = 4;
                f->js_code = 0;
                break;
            }
            TP_TRY(js_code_point(f, out,
                                 b == 'b'   ? 0x08
                                 : b == 'f' ? 0x0C
                                 : b == 'n' ? 0x0A
                                 : b == 'r' ? 0x0D
                                 : b == 't' ? 0x09
                                            : b));
            break;
        case JS_HEX:
            f->js_code = f->js_code << 4 | (uint32_t)tp_hexval(b);
            if (--f->js_hex_left == 0) {
                f->js_phase = JS_IN;
                TP_TRY(js_code_point(f, out, f->js_code));
            }
            break;
        default: /* JS_DONE */
            return TP_OK;
        }
    }
    return TP_OK;
}

static tp_status stream_piece(tp_emitter *e, frame *f, const uint8_t *data, size_t n);

static tp_status text_in_frame(tp_emitter *e, frame *f, const uint8_t *data, size_t n);

tp_status tp_emitter_text(tp_emitter *e, const uint8_t *data, size_t n) {
    frame *f;
    if (e->stopped || e->depth == 0 || n == 0) return TP_OK;
    f = &e->frames[e->depth - 1];
    /* The common piece: whole characters of content, reasoning or arguments with nothing
     * held back before them, straight to where stream_piece and stream_whole would send it. */
    if (TP_LIKELY(!f->held_len && data[n - 1] < 0x80)) {
        if ((f->role == TP_ROLE_CONTENT || f->role == TP_ROLE_REASONING) &&
            f->decode != TP_DECODE_JSON_STRING)
            return message_text(e, f->role == TP_ROLE_REASONING, data, n);
        if (f->role == TP_ROLE_TOOL_ARGS && f->decode != TP_DECODE_JSON_STRING)
            return args(e, data, n);
    }
    return text_in_frame(e, f, data, n);
}

/* tp_emitter_text's other cases. */
static TP_NOINLINE tp_status text_in_frame(tp_emitter *e, frame *f, const uint8_t *data, size_t n) {
    /* text written as a JSON string (arguments too: a string holding the arguments JSON) */
    if (f->decode == TP_DECODE_JSON_STRING &&
        (f->role == TP_ROLE_REASONING || f->role == TP_ROLE_CONTENT ||
         f->role == TP_ROLE_TOOL_ARGS)) {
        tp_status st = js_decode(f, &e->decoded, data, n);
        if (st == TP_OK && e->decoded.len) st = stream_piece(e, f, e->decoded.data, e->decoded.len);
        scratch_done(&e->decoded);
        return st;
    }
    if (streams(e, f)) return stream_piece(e, f, data, n);
    if (f->role == TP_ROLE_TOOL_CALL) return TP_OK;
    if (TP_UNLIKELY(e->capture.len - f->cap_start + n > e->max_argument_bytes))
        return stop_at_limit(e, TP_MSG_LIMIT_ARGUMENT); /* a name or value held whole */
    return tp_buf_append(&e->capture, data, n);
}

/* Streams a piece of a streamed frame's text after what it holds back. */
static tp_status stream_piece(tp_emitter *e, frame *f, const uint8_t *data, size_t n) {
    tp_status st;
    if (!f->held_len) return stream_whole(e, f, data, n);
    /* the held bytes and data as one piece, as if they had come in one feed */
    st = tp_buf_append(&e->joined, f->held, f->held_len);
    if (st == TP_OK) st = tp_buf_append(&e->joined, data, n);
    if (st == TP_OK) st = stream_whole(e, f, e->joined.data, e->joined.len);
    scratch_done(&e->joined);
    return st;
}

/* ToolCallStart, once the name is known and the arguments have begun (or the call ends):
 * an id the output carries before its arguments is known by then. */
static tp_status announce(tp_emitter *e) {
    call_state *c = &e->call;
    if (!c->active || c->dead || !c->has_name || c->index >= 0) return TP_OK;
    if ((uint64_t)e->next_index >= e->max_tool_calls) return stop_at_limit(e, TP_MSG_LIMIT_CALLS);
    c->index = e->next_index++;
    TP_TRY(push_event(e, TP_EV_CALL_START, c->index, c->name.data, c->name.len, c->carried_id.data,
                      c->carried_id.len, NULL));
    if (c->pending.len) { /* arguments that came before the name, as one delta */
        TP_TRY(push_event(e, TP_EV_ARGS, c->index, c->pending.data, c->pending.len, NULL, 0, NULL));
        c->pending.len = 0;
    }
    return TP_OK;
}

int tp_emitter_declares(const tp_emitter *e, const uint8_t *name, size_t len) {
    const call_state *c = &e->call;
    uint32_t n_types;
    if (!e->tools || !c->active || c->tool < 0 || tp_tools_param_count(e->tools, c->tool) == 0)
        return 1;
    return tp_tools_param_types(e->tools, c->tool, name, len, &n_types) != NULL;
}

/* Any name (a tool that declares none): a name holds no whitespace and no angle bracket. */
static int any_name_cut(const uint8_t *text, size_t len, const uint8_t *end, size_t end_len) {
    size_t i = len, k;
    for (;;) { /* text[i:] a proper prefix of end, text[:i] a name */
        if (len - i < end_len && memcmp(end, text + i, len - i) == 0) {
            for (k = 0; k < i; k++) {
                uint8_t b = text[k];
                if (tp_is_space(b) || b == '<' || b == '>') break;
            }
            if (k == i) return 1;
        }
        if (i == 0) return 0;
        i--;
    }
}

int tp_emitter_declares_cut(const tp_emitter *e, const uint8_t *text, size_t len,
                            const uint8_t *end, size_t end_len) {
    const call_state *c = &e->call;
    if (!c->active) return 0;
    if (!e->tools || c->tool < 0 || tp_tools_param_count(e->tools, c->tool) == 0)
        return any_name_cut(text, len, end, end_len);
    return tp_tools_param_cut(e->tools, c->tool, text, len, end, end_len);
}

static tp_status set_name(tp_emitter *e, const uint8_t *name, size_t n) {
    call_state *c = &e->call;
    if (c->dead) return TP_OK;
    if (c->has_name) return call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_TWO_NAMES, NULL, 0);
    if (n == 0) return call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_EMPTY_NAME, NULL, 0);
    if (e->tools) {
        c->tool = tp_tools_find(e->tools, name, n);
        if (c->tool < 0) return call_error(e, TP_PE_UNKNOWN_TOOL, TP_MSG_UNKNOWN_TOOL, name, n);
    }
    c->has_name = 1;
    c->name.len = 0;
    TP_TRY(tp_buf_append(&c->name, name, n));
    return c->begun ? announce(e) : TP_OK;
}

/* A parameter's raw text as JSON, typed by its schema types; a value that fits none of
 * them makes the call's arguments invalid (in repair mode, unless the output said it is
 * JSON, it goes in as a JSON string of its text, and the call's end must convert it to
 * one of its schema's types: toolparse.repair).
 * The raw text is read as text first: an ill-formed UTF-8 part becomes U+FFFD. */
static tp_status typed_value(tp_emitter *e, const uint8_t *raw, size_t n) {
    tp_buf text = TP_BUF_INIT(&e->alloc), json = TP_BUF_INIT(&e->alloc);
    int fits = 1;
    tp_status st = tp_utf8_replace_append(&text, raw, n);
    const uint8_t *data = text.data ? text.data : raw;
    if (st == TP_OK)
        st = tp_typed_json(&json, e->scanner, e->call.ptypes, e->call.n_ptypes, data, text.len,
                           &fits);
    if (st == TP_OK && !fits && e->repair && e->call.ptypes != json_only) {
        json.len = 0;
        e->call.unfit = 1;
        st = tp_buf_append(&json, "\"", 1);
        if (st == TP_OK) st = tp_json_escape_append(&json, data, text.len);
        if (st == TP_OK) st = tp_buf_append(&json, "\"", 1);
        if (st == TP_OK) st = args(e, json.data, json.len);
    } else if (st == TP_OK && !fits)
        st = call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_VALUE_TYPE, e->call.pname.data,
                        e->call.pname.len);
    else if (st == TP_OK)
        st = args(e, json.data, json.len);
    tp_buf_free(&text);
    tp_buf_free(&json);
    return st;
}

/* A MiniMax-M3 parameter value (nested tags) as JSON text; malformed tags make the call's
 * arguments invalid. */
static tp_status m3_value(tp_emitter *e, const uint8_t *raw, size_t n) {
    call_state *c = &e->call;
    tp_buf text = TP_BUF_INIT(&e->alloc), json = TP_BUF_INIT(&e->alloc);
    int ok = 1;
    tp_status st = tp_utf8_replace_append(&text, raw, n);
    if (st == TP_OK)
        st = tp_m3_value_to_json(&json, e->scanner, c->ptypes, c->n_ptypes, c->pschema,
                                 c->pschema_len, c->pknown, text.data, text.len, &ok);
    if (st == TP_OK && ok)
        st = args(e, json.data, json.len);
    else if (st == TP_OK)
        st = call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_INVALID_ARGUMENTS, NULL, 0);
    tp_buf_free(&text);
    tp_buf_free(&json);
    return st;
}

static int blank(const tp_buf *b) {
    size_t k;
    for (k = 0; k < b->len; k++)
        if (!tp_is_space(b->data[k])) return 0;
    return 1;
}

static tp_status finish_call(tp_emitter *e) {
    call_state *c = &e->call;
    size_t used = 0;
    int valid;
    tp_event *ev;
    TP_TRY(announce(e));
    if (e->stopped) return TP_OK; /* announcing it met the limit on calls */
    if (!c->has_name) { /* (a repair that closed it: its name never came) */
        if (e->repair && c->repaired)
            return call_error(e, TP_PE_INCOMPLETE, TP_MSG_ENDED_INSIDE_CALL, NULL, 0);
        return call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_NO_NAME, NULL, 0);
    }
    if (c->params) {
        if (!(e->repair && c->in_param)) TP_TRY(args_str(e, "}")); /* repair drops a name */
    } else if (!c->has_args)
        TP_TRY(args_str(e, "{}"));
    if (e->stopped) return TP_OK; /* closing the arguments met the limit on their bytes */
    TP_TRY(unstage(e));
    tp_json_reset(e->scanner);
    tp_json_feed(e->scanner, c->args.data, c->args.len, &used);
    valid = c->args.len > 0 && c->args.data[0] == '{' &&
            tp_json_finish(e->scanner) == TP_JSON_COMPLETE &&
            tp_json_end(e->scanner) == (int64_t)c->args.len;
    if (e->repair && c->repaired && !c->params && (!c->has_args || blank(&c->args)))
        /* never invent arguments */
        return call_error(e, TP_PE_INCOMPLETE, TP_MSG_ENDED_INSIDE_CALL, NULL, 0);
    if (e->repair && (!valid || c->repaired)) {
        TP_TRY(push_event(e, TP_EV_CALL_REPAIR, c->index, c->args.data, c->args.len, c->name.data,
                          c->name.len, &ev));
        ev->offset = e->offset;
        ev->code = (uint32_t)c->repaired | call_marks(c);
        return TP_OK;
    }
    if (!valid) return call_error(e, TP_PE_INVALID_ARGUMENTS, TP_MSG_NOT_AN_OBJECT, NULL, 0);
    if (e->repair)
        TP_TRY(push_event(e, TP_EV_ARGS, c->index, c->args.data, c->args.len, NULL, 0, NULL));
    TP_TRY(push_event(e, TP_EV_CALL_END, c->index, c->args.data, c->args.len, c->name.data,
                      c->name.len, &ev));
    ev->offset = e->offset; /* where an error found in reading the arguments is reported */
    ev->code = call_marks(c);
    return TP_OK;
}

/* A parameter value written as a Python literal or a Gemma 4 value, as JSON text. */
static tp_status converted_value(tp_emitter *e, uint32_t decode, const uint8_t *raw, size_t n) {
    tp_buf json = TP_BUF_INIT(&e->alloc);
    tp_status st = decode == TP_DECODE_PYTHON ? tp_python_literal_to_json(&json, raw, n)
                   : decode == TP_DECODE_GEMMA
                       ? tp_gemma_value_to_json(&json, raw, n, TP_GEMMA_QUOTE)
                       : tp_gemma_value_to_json(&json, raw, n, TP_FUNCTIONGEMMA_QUOTE);
    if (st == TP_OK) st = args(e, json.data, json.len);
    tp_buf_free(&json);
    return st;
}

static tp_status flush_held(tp_emitter *e, frame *f) {
    if (f->held_len) {
        uint8_t held[4];
        size_t n = f->held_len;
        memcpy(held, f->held, n);
        f->held_len = 0;
        return stream_text(e, f, held, n);
    }
    return TP_OK;
}

tp_status tp_emitter_close(tp_emitter *e, uint64_t pos) {
    frame f;
    call_state *c = &e->call;
    const uint8_t *data;
    size_t n;
    tp_status st = TP_OK;
    if (e->stopped) return TP_OK;
    e->offset = pos;
    if (e->depth == 0) return TP_OK;
    f = e->frames[--e->depth];
    TP_TRY(flush_held(e, &f));
    data = e->capture.data ? e->capture.data + f.cap_start : (const uint8_t *)"";
    n = e->capture.len - f.cap_start;
    if (f.role == TP_ROLE_TOOL_CALL) {
        if (c->active && !c->dead) st = finish_call(e);
        c->active = 0;
    } else if (!c->active || f.role == TP_ROLE_REASONING || f.role == TP_ROLE_CONTENT ||
               f.role == TP_ROLE_TOOL_ARGS) {
        /* nothing more */
    } else if (f.role == TP_ROLE_TOOL_NAME || f.role == TP_ROLE_TOOL_ID ||
               f.role == TP_ROLE_PARAM_NAME) {
        tp_buf decoded = TP_BUF_INIT(&e->alloc);
        const uint8_t *value = data;
        size_t len = n;
        if (f.decode == TP_DECODE_JSON_STRING) {
            st = tp_json_string_decode(&decoded, data, n);
            value = decoded.data, len = decoded.len;
        }
        if (st == TP_OK && f.role == TP_ROLE_TOOL_NAME) {
            st = set_name(e, value, len);
        } else if (st == TP_OK && f.role == TP_ROLE_TOOL_ID) {
            if (c->index < 0) { /* after the announcement, the announced id stays */
                c->carried_id.len = 0;
                st = tp_buf_append(&c->carried_id, value, len);
            }
        } else if (st == TP_OK) {
            uint32_t nt = 0;
            const uint32_t *types = NULL;
            c->in_param = 1;
            c->pschema = NULL;
            c->pschema_len = 0;
            if (e->tools && c->tool >= 0) {
                types = tp_tools_param_types(e->tools, c->tool, value, len, &nt);
                c->pschema = tp_tools_param_schema(e->tools, c->tool, value, len, &c->pschema_len);
            }
            c->pknown = types != NULL;
            c->ptypes = types && nt ? types : string_only;
            c->n_ptypes = types && nt ? nt : 1;
            c->param_streams = c->n_ptypes == 1 && c->ptypes[0] == TP_TYPE_STRING;
            c->pname.len = 0;
            st = tp_buf_append(&c->pname, value, len);
            if (st == TP_OK) {
                /* one piece: the separator, the quoted name and the colon */
                tp_buf key = TP_BUF_INIT(&e->alloc);
                st = tp_buf_append(&key, c->params == 0 ? "{\"" : ", \"", c->params == 0 ? 2 : 3);
                if (st == TP_OK) st = tp_json_escape_append(&key, value, len);
                if (st == TP_OK) st = tp_buf_append(&key, "\": ", 3);
                if (st == TP_OK) st = args(e, key.data, key.len);
                tp_buf_free(&key);
            }
            c->params++;
        }
        tp_buf_free(&decoded);
    } else if (f.role == TP_ROLE_PARAM_VALUE && c->in_param && c->value_cut && !c->param_streams) {
        /* a value the end cut off, as written: the repair reads it (the arguments stay
         * open, so it is read as cut off) */
        tp_buf text = TP_BUF_INIT(&e->alloc);
        c->in_value = 0;
        st = tp_utf8_replace_append(&text, data, n);
        if (st == TP_OK) st = args(e, text.data, text.len);
        tp_buf_free(&text);
    } else if (f.role == TP_ROLE_PARAM_VALUE && c->in_param) {
        c->in_value = 0;
        if (c->param_streams)
            st = args_str(e, "\"");
        else if (f.decode == TP_DECODE_PYTHON || f.decode == TP_DECODE_GEMMA ||
                 f.decode == TP_DECODE_FUNCTIONGEMMA)
            st = converted_value(e, f.decode, data, n);
        else if (f.decode == TP_DECODE_MINIMAX_M3)
            st = m3_value(e, data, n);
        else
            st = typed_value(e, data, n);
        c->in_param = 0;
    }
    if (e->stopped) return st; /* it met a limit and let go of its captures */
    /* an enclosing name or id keeps the text (an id may hold the name) */
    if (!(e->depth > 0 && captures(e->frames[e->depth - 1].role))) e->capture.len = f.cap_start;
    return st;
}

tp_status tp_emitter_error(tp_emitter *e, uint32_t kind, uint32_t limit_msg, uint64_t offset) {
    call_state *c = &e->call;
    int32_t index = -1;
    uint32_t msg = kind == TP_PE_INCOMPLETE          ? TP_MSG_ENDED_INSIDE_CALL
                   : kind == TP_PE_INVALID_ARGUMENTS ? TP_MSG_INVALID_ARGUMENTS
                                                     : TP_MSG_UNEXPECTED;
    if (e->stopped) return TP_OK;
    if (kind == TP_PE_LIMIT) {
        e->offset = offset;
        return stop_at_limit(e, limit_msg);
    }
    if (c->active && kind == TP_PE_UNEXPECTED) {
        kind = TP_PE_INVALID_ARGUMENTS; /* inside a call envelope, bad input is a bad call */
        msg = TP_MSG_INVALID_ARGUMENTS;
    }
    if (c->active && !c->dead) index = c->index;
    if (c->active) c->dead = 1;
    return push_error(e, kind, msg, index, offset, NULL, 0);
}

tp_status tp_emitter_abort(tp_emitter *e, uint32_t depth) {
    if (e->stopped) return TP_OK;
    while (e->depth > depth) {
        frame f = e->frames[--e->depth];
        if (f.role == TP_ROLE_REASONING || f.role == TP_ROLE_CONTENT) TP_TRY(flush_held(e, &f));
        if (f.role == TP_ROLE_TOOL_CALL) e->call.active = 0;
        e->capture.len = f.cap_start;
    }
    return TP_OK;
}
