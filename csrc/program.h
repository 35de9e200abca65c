/* program.h: a compiled format program (bytecode, strings, stop sets, entries), loaded
 * from the blob python/toolparse/grammar.py writes.  Immutable once loaded: share it
 * across streams and threads. */
#ifndef TOOLPARSE_PROGRAM_H
#define TOOLPARSE_PROGRAM_H

#include "common.h"
#include "trie.h"

/* Opcodes: the same numbers as grammar.py. */
enum {
    TP_OP_END,
    TP_OP_LIT,
    TP_OP_WS,
    TP_OP_UNTIL,
    TP_OP_JSON,
    TP_OP_EOF,
    TP_OP_CHOICE,
    TP_OP_COMMIT,
    TP_OP_PCOMMIT,
    TP_OP_BCOMMIT,
    TP_OP_FAIL,
    TP_OP_FAILTWICE,
    TP_OP_JMP,
    TP_OP_CALL,
    TP_OP_RET,
    TP_OP_CUT,
    TP_OP_TOPEN,
    TP_OP_TCLOSE,
    TP_OP_RECOVER,
    TP_OP_RPOP,
    TP_OP_CHARS,
    TP_OP_CONST,
    TP_OP_COUNT
};

/* Operand words after each opcode (grammar.OPERANDS): the one table of instruction widths,
 * which the loader checks the code with and the VM steps by (0 past the last opcode). */
static inline uint32_t tp_op_operands(uint32_t op) {
    static const uint8_t operands[TP_OP_COUNT] = {
        [TP_OP_END] = 0,     [TP_OP_LIT] = 1,     [TP_OP_WS] = 0,      [TP_OP_UNTIL] = 2,
        [TP_OP_JSON] = 2,    [TP_OP_EOF] = 1,     [TP_OP_CHOICE] = 1,  [TP_OP_COMMIT] = 1,
        [TP_OP_PCOMMIT] = 1, [TP_OP_BCOMMIT] = 1, [TP_OP_FAIL] = 0,    [TP_OP_FAILTWICE] = 0,
        [TP_OP_JMP] = 1,     [TP_OP_CALL] = 1,    [TP_OP_RET] = 0,     [TP_OP_CUT] = 0,
        [TP_OP_TOPEN] = 2,   [TP_OP_TCLOSE] = 0,  [TP_OP_RECOVER] = 1, [TP_OP_RPOP] = 0,
        [TP_OP_CHARS] = 2,   [TP_OP_CONST] = 1,
    };
    return op < TP_OP_COUNT ? operands[op] : 0;
}

#define TP_PROGRAM_MAGIC "TPG1" /* a blob's first 4 bytes (grammar.MAGIC) */
#define TP_EOF_STOPPED 1u /* EOF fails where the output was cut short */
#define TP_CHARS_SET_BYTES 32u /* a CHARS byte set: bit b of byte b >> 3 */
#define TP_CHARS_MIN1 1u
#define TP_UNTIL_MIN1 1u
#define TP_UNTIL_NEED_STOP 2u
#define TP_UNTIL_COMMIT 4u
/* at the end of input, the text ends before a stop the end cut off (repair grammars) */
#define TP_UNTIL_END_TRIMS 8u
#define TP_JSON_KIND_ANY 0u
#define TP_JSON_KIND_STRING 1u
#define TP_JSON_KIND_OBJECT 2u
/* JSON operand flags (bits 16+): a value the end of the input cuts off matches (repair
 * grammars) */
#define TP_JSON_CLOSE_AT_END 1u
#define TP_DECODE_RAW 0u
#define TP_DECODE_JSON_STRING 1u
#define TP_DECODE_STRING 2u /* a parameter value the output says is a string */
#define TP_DECODE_JSON 3u   /* a parameter value the output says is JSON */
#define TP_DECODE_PYTHON 4u /* a parameter value written as a Python literal */
#define TP_DECODE_GEMMA 5u  /* a parameter value written as a Gemma 4 value */
#define TP_DECODE_FUNCTIONGEMMA 6u /* a FunctionGemma value: Gemma notation, <escape> strings */
#define TP_DECODE_MINIMAX_M3 7u /* a MiniMax-M3 value: nested tags, leaves typed by schema */

/* Roles: the order of grammar.ROLES. */
enum {
    TP_ROLE_REASONING,
    TP_ROLE_CONTENT,
    TP_ROLE_TOOL_CALL,
    TP_ROLE_TOOL_NAME,
    TP_ROLE_TOOL_ARGS,
    TP_ROLE_TOOL_ID,
    TP_ROLE_PARAM_NAME,
    TP_ROLE_PARAM_VALUE,
    TP_ROLE_REPAIRED, /* marks the open call as salvaged (repair grammars) */
    TP_ROLE_MISSING_OPENER, /* marks the open call as written without its opening marker */
    TP_ROLE_MISSING_CLOSER, /* marks the open call as missing a closing tag in mid-output */
    TP_ROLE_COUNT
};

typedef struct tp_program tp_program;

#define TP_DECLARED_FOLLOW 0x80000000u /* grammar.DECLARED_FOLLOW */
#define TP_NO_STRING 0xFFFFFFFFu       /* grammar.NO_STRING */
#define TP_MAX_PARAM_NAME 256u         /* grammar.MAX_PARAM_NAME */
#define TP_MAX_DECLARED 64u            /* grammar.MAX_DECLARED */

typedef struct tp_stop {
    uint32_t marker;       /* string index */
    uint32_t n_follow;
    const uint32_t *follow; /* string indices */
    /* declared_param() lookaheads, two string indices each: prefix (TP_NO_STRING: none)
     * and end; between them, a name the open call's tool declares */
    uint32_t n_declared;
    const uint32_t *declared;
} tp_stop;

typedef struct tp_stopset {
    tp_trie *trie; /* over the stops' markers, in order */
    uint32_t n_stops;
    tp_stop *stops;
} tp_stopset;

/* Loads and checks a blob (every operand in range, every jump inside the code).  On
 * TP_ERR_ARG *where (if not NULL) gets a static description.  Caller frees with
 * tp_program_free(). */
tp_status tp_program_new(const uint8_t *blob, size_t len, tp_program **out, const char **where);
/* tp_program_new with an allocator (common.h; NULL: the default). */
tp_status tp_program_new_with(const tp_allocator *alloc, const uint8_t *blob, size_t len,
                              tp_program **out, const char **where);
void tp_program_free(tp_program *p); /* NULL-safe */

/* The address of an entry point, or -1. */
int64_t tp_program_entry(const tp_program *p, const char *name, size_t name_len);

/* Borrowed views, valid while p lives. */
const uint32_t *tp_program_code(const tp_program *p, uint32_t *n_words);
const uint8_t *tp_program_string(const tp_program *p, uint32_t index, uint32_t *len);
const tp_stopset *tp_program_stopset(const tp_program *p, uint32_t index);
uint32_t tp_program_stopset_count(const tp_program *p);
uint32_t tp_program_max_follow(const tp_program *p); /* longest follow literal */

#endif
