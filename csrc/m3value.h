/* m3value.h: a MiniMax-M3 tag-tree value to JSON text, and the schema typing of a value's
 * raw text (internal).  The twin of python/toolparse/reference/m3value.py. */
#ifndef TOOLPARSE_M3VALUE_H
#define TOOLPARSE_M3VALUE_H

#include "buffer.h"
#include "common.h"
#include "json.h"

/* Nesting read: schema levels a tool table keeps, tag levels a value may have. */
#define TP_M3_MAX_DEPTH 32u
/* Types one schema node may list (the tool table's limit for a parameter). */
#define TP_M3_MAX_TYPES 64u

/* Appends the JSON text of a value's raw text (valid UTF-8) typed by its schema types, in
 * order: the first type the text fits; a string (the raw text, whitespace kept) at a
 * "string" type or one the reader does not know.  *fits is 0, and nothing is appended,
 * when the text fits none of them.  scanner: a strict JSON scanner, reset here. */
tp_status tp_typed_json(tp_buf *out, tp_json *scanner, const uint32_t *types, uint32_t n_types,
                        const uint8_t *raw, size_t n, int *fits);

/* A schema node of the tool table (little-endian u32s):
 *   n_types, n_types type codes, n_props, per property: name (u32 length, bytes),
 *   u32 node length, node; then u32 items node length (0: none), the items node.
 * 1 when node[0..len) is one well-formed node nested at most TP_M3_MAX_DEPTH - depth
 * levels. */
int tp_m3_schema_valid(const uint8_t *node, size_t len, uint32_t depth);

/* Appends the JSON text of the MiniMax-M3 value s[0..n) (a parameter's text between its
 * tags, valid UTF-8): an object as child tags named after its keys, an array as <item>
 * children, recursively, each leaf typed by its schema (tp_typed_json).  types: the
 * parameter's types; node: its schema node (NULL: no nested schema); known: 0 when the
 * parameter is not in the schema (then the tags alone say object or array).  *ok is 0
 * when the tags are malformed (out then holds partial text). */
tp_status tp_m3_value_to_json(tp_buf *out, tp_json *scanner, const uint32_t *types,
                              uint32_t n_types, const uint8_t *node, size_t node_len, int known,
                              const uint8_t *s, size_t n, int *ok);

#endif
