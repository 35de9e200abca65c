/* tools.h: the tool table: each tool's name and its parameters' types and schema nodes,
 * which type XML-style parameter values.  Immutable once loaded: share it across streams
 * and threads. */
#ifndef TOOLPARSE_TOOLS_H
#define TOOLPARSE_TOOLS_H

#include "common.h"

typedef struct tp_tools tp_tools;

/* Loads a tool table blob: u32 n_tools; per tool: name (u32 length, bytes), u32 n_params;
 * per parameter: name, u32 n_types, n_types u32 type codes.  Then, optionally, for every
 * parameter in the same order: u32 length and its schema node (m3value.h: types,
 * properties and items, for nested values; length 0: none).  Immutable; share it.
 * Caller frees with tp_tools_free(). */
tp_status tp_tools_new(const uint8_t *blob, size_t len, tp_tools **out);
/* tp_tools_new with an allocator (common.h; NULL: the default). */
tp_status tp_tools_new_with(const tp_allocator *alloc, const uint8_t *blob, size_t len,
                            tp_tools **out);
void tp_tools_free(tp_tools *t); /* NULL-safe */
/* The tool's index, or -1. */
int32_t tp_tools_find(const tp_tools *t, const uint8_t *name, size_t len);
/* How many parameters a tool declares (0 for an index that is no tool). */
uint32_t tp_tools_param_count(const tp_tools *t, int32_t tool);
/* The types of a tool's parameter (NULL, 0 when unknown). */
const uint32_t *tp_tools_param_types(const tp_tools *t, int32_t tool, const uint8_t *name,
                                     size_t len, uint32_t *n_types);
/* Whether text is what the end of the input left of a declared parameter name followed by
 * `end`: the first bytes of a name, or a whole name and the first bytes of end. */
int tp_tools_param_cut(const tp_tools *t, int32_t tool, const uint8_t *text, size_t len,
                       const uint8_t *end, size_t end_len);
/* The schema node of a tool's parameter (NULL, 0 when unknown or the blob has none). */
const uint8_t *tp_tools_param_schema(const tp_tools *t, int32_t tool, const uint8_t *name,
                                     size_t len, size_t *node_len);

#endif
