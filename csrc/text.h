/* text.h: UTF-8 and JSON string text (internal). */
#ifndef TOOLPARSE_TEXT_H
#define TOOLPARSE_TEXT_H

#include "buffer.h"
#include "common.h"

/* How many trailing bytes of data form an incomplete UTF-8 sequence more bytes could
 * still complete (0 to 3). */
size_t tp_utf8_tail(const uint8_t *data, size_t n);

/* Length of the valid UTF-8 character at s (1 to 4), or 0 with *bad set to the length of
 * the ill-formed part that one U+FFFD replaces (CPython's "replace"). */
size_t tp_utf8_char(const uint8_t *s, size_t n, size_t *bad);

/* Appends s[0..n) with each ill-formed UTF-8 part replaced by U+FFFD (CPython's
 * decode(errors="replace")). */
tp_status tp_utf8_replace_append(tp_buf *out, const uint8_t *s, size_t n);

/* Appends code point cp (at most 0x10FFFF) as UTF-8. */
tp_status tp_utf8_append(tp_buf *out, uint32_t cp);

/* The value of a hex digit (0 for any other byte). */
int tp_hexval(uint8_t b);

/* Appends text as the inside of a JSON string, escaped as json.dumps(ensure_ascii=False)
 * does, each ill-formed UTF-8 part replaced by U+FFFD. */
tp_status tp_json_escape_append(tp_buf *out, const uint8_t *s, size_t n);

/* Decodes a JSON string token (validated by a scanner; leading whitespace allowed). */
tp_status tp_json_string_decode(tp_buf *out, const uint8_t *s, size_t n);

#endif
