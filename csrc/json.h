/* json.h: incremental, resumable scanner for one JSON value.  See docs/primitives.md. */
#ifndef TOOLPARSE_JSON_H
#define TOOLPARSE_JSON_H

#include "common.h"
#include "pool.h"

#define TP_JSON_DEFAULT_MAX_DEPTH 512
#define TP_JSON_MAX_DEPTH_CEILING (1u << 20)

typedef struct tp_json tp_json;

typedef enum tp_json_dialect {
    TP_JSON_STRICT = 0,
    TP_JSON_LENIENT = 1,
    TP_JSON_PYTHON = 2
} tp_json_dialect;

typedef enum tp_json_verdict {
    TP_JSON_NEED_MORE = 0,
    TP_JSON_COMPLETE = 1,
    TP_JSON_ERROR = 2,
    TP_JSON_INCOMPLETE = 3 /* only from tp_json_finish */
} tp_json_verdict;

typedef enum tp_json_reason {
    TP_JSON_OK = 0,
    TP_JSON_E_LIMIT,
    TP_JSON_E_UNEXPECTED_BYTE,
    TP_JSON_E_TRAILING_COMMA,
    TP_JSON_E_INVALID_LITERAL,
    TP_JSON_E_INVALID_NUMBER,
    TP_JSON_E_LEADING_ZERO,
    TP_JSON_E_INVALID_ESCAPE,
    TP_JSON_E_LONE_SURROGATE,
    TP_JSON_E_CONTROL_CHARACTER,
    TP_JSON_E_INVALID_UTF8
} tp_json_reason;

/* Relaxation bits, in the documented order. */
enum {
    TP_JSON_R_TRAILING_COMMA = 1u << 0,
    TP_JSON_R_SINGLE_QUOTE = 1u << 1,
    TP_JSON_R_UNQUOTED_KEY = 1u << 2,
    TP_JSON_R_PYTHON_LITERAL = 1u << 3,
    TP_JSON_R_CONTROL_CHARACTER = 1u << 4,
    TP_JSON_R_LONE_SURROGATE = 1u << 5,
    TP_JSON_R_MISSING_COMMA = 1u << 6
};
#define TP_JSON_RELAXATION_COUNT 7

/* max_depth: 1..TP_JSON_MAX_DEPTH_CEILING.  Caller frees *out with tp_json_free(). */
tp_status tp_json_new(tp_json_dialect dialect, uint32_t max_depth, tp_json **out);
/* tp_json_new with the scanner in place when it fits there (pool.h). */
tp_status tp_json_new_in(tp_json_dialect dialect, uint32_t max_depth, tp_place *place,
                         tp_json **out);
/* Either, with an allocator (common.h; NULL: the default); place may be NULL. */
tp_status tp_json_new_with(const tp_allocator *alloc, tp_json_dialect dialect, uint32_t max_depth,
                           tp_place *place, tp_json **out);
/* The deepest max_depth the scanner has room for, and a new max_depth up to it (TP_ERR_ARG
 * past it: make a new scanner).  Before the first feed or after a reset. */
uint32_t tp_json_depth_room(const tp_json *s);
tp_status tp_json_set_max_depth(tp_json *s, uint32_t max_depth);
void tp_json_free(tp_json *s); /* NULL-safe */
void tp_json_reset(tp_json *s);

/* Scans up to len bytes; *consumed (may be NULL) gets how many were taken.  Once the value
 * is complete, bytes after it are not consumed.  Returns TP_JSON_NEED_MORE, _COMPLETE or
 * _ERROR; after tp_json_finish it returns the final verdict and consumes nothing. */
tp_json_verdict tp_json_feed(tp_json *s, const uint8_t *buf, size_t len, size_t *consumed);
/* End of input: TP_JSON_COMPLETE, _INCOMPLETE or _ERROR.  Idempotent. */
tp_json_verdict tp_json_finish(tp_json *s);

tp_json_verdict tp_json_verdict_of(const tp_json *s);
int tp_json_finished(const tp_json *s);
uint64_t tp_json_position(const tp_json *s); /* bytes consumed */
int64_t tp_json_end(const tp_json *s);       /* offset past the value, or -1 */
uint32_t tp_json_depth(const tp_json *s);
uint32_t tp_json_relaxations(const tp_json *s); /* TP_JSON_R_* bits */
tp_json_reason tp_json_error(const tp_json *s, uint64_t *offset);
const char *tp_json_reason_name(tp_json_reason reason); /* static string, e.g. "limit" */
const char *tp_json_relaxation_name(unsigned bit_index); /* NULL past the last */

/* The partial view: writes the shortest closing suffix to buf.  TP_OK with *len set;
 * TP_ERR_NOSPACE with *len = the size needed; TP_ERR_STATE after an error (no completion). */
tp_status tp_json_closing(const tp_json *s, char *buf, size_t cap, size_t *len);

#endif
