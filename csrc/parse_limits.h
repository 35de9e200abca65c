/* parse_limits.h: what one response may cost (tp_limits), enforced by the VM and the event
 * builder alike. */
#ifndef TOOLPARSE_PARSE_LIMITS_H
#define TOOLPARSE_PARSE_LIMITS_H

#include "common.h"

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

/* Instructions in a row without the parse getting further into the input: a compiled
 * grammar stays far below (no left recursion, no empty repetition); only a corrupt
 * program loops, and then the parse ends with a limit error (TP_MSG_LIMIT) instead of
 * hanging. */
#define TP_MAX_IDLE_STEPS (1u << 20)

void tp_limits_default(tp_limits *limits);

#endif
