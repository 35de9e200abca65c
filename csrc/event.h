/* event.h: what a parse reports: the kinds of events, the kinds and messages of errors,
 * the event record, and the parameter types that type a call's values.  Python keeps
 * copies of these numbers (tests/test_header_constants.py checks them). */
#ifndef TOOLPARSE_EVENT_H
#define TOOLPARSE_EVENT_H

#include "common.h"

typedef enum tp_event_kind {
    TP_EV_REASONING = 1,
    TP_EV_CONTENT = 2,
    TP_EV_CALL_START = 3, /* text: name; aux: the id the output carried (may be empty) */
    TP_EV_ARGS = 4,       /* text: the next piece of the arguments JSON */
    TP_EV_CALL_END = 5,   /* text: the whole arguments JSON; aux: name; offset: its end;
                           * code: 2 set when the call was written without its opening
                           * marker (repair grammars), 4 set when a value that fit none of
                           * its types went in as a string (repair: it must convert), 8
                           * set when a closing tag was left out in mid-output (repair) */
    TP_EV_ERROR = 6,      /* code: kind; msg: message; text: detail (a name) */
    TP_EV_CALL_REPAIR = 7 /* repair mode: a call whose arguments need repair; text: its
                           * arguments as written; aux: name; offset: where it ended;
                           * code: 1 set when the end of the output stood for its closing;
                           * 2 and 4 as for TP_EV_CALL_END */
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
    TP_MSG_VALUE_TYPE = 9,     /* detail: the parameter whose value fits none of its types */
    TP_MSG_LIMIT = 10,         /* the grammar made no progress for too many steps */
    TP_MSG_LIMIT_DEPTH = 11,   /* the limits of tp_limits, in its order */
    TP_MSG_LIMIT_ARGUMENT = 12,
    TP_MSG_LIMIT_PENDING = 13,
    TP_MSG_LIMIT_CALLS = 14,
    TP_MSG_LIMIT_STREAM = 15
} tp_error_message;

typedef struct tp_event {
    uint32_t kind;
    int32_t index; /* call index, or -1 */
    uint32_t text_off, text_len; /* in the arena */
    uint32_t aux_off, aux_len;
    uint32_t code, msg;
    uint64_t offset; /* errors and call ends: the stream offset */
} tp_event;

/* Where events go: a stream's own list, or a batch's output shared by its streams
 * (emit.h defines it). */
typedef struct tp_event_out tp_event_out;

/* Parameter types, in the order of a JSON schema's "type" list. */
enum {
    TP_TYPE_STRING = 0,
    TP_TYPE_INTEGER = 1,
    TP_TYPE_NUMBER = 2,
    TP_TYPE_BOOLEAN = 3,
    TP_TYPE_OBJECT = 4,
    TP_TYPE_ARRAY = 5,
    TP_TYPE_NULL = 6,
    TP_TYPE_OTHER = 7,
    TP_TYPE_JSON = 8 /* any JSON value: the output stated it (not a schema type) */
};

#endif
