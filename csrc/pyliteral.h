/* pyliteral.h: a Python literal, as pythonic tool calls write argument values, to JSON
 * text (internal). */
#ifndef TOOLPARSE_PYLITERAL_H
#define TOOLPARSE_PYLITERAL_H

#include "buffer.h"
#include "common.h"

/* Appends the JSON text of the Python literal s[0..n) (which the python dialect of the
 * JSON scanner has accepted): strings decoded with Python's escapes and re-escaped as
 * json.dumps(ensure_ascii=False) does, True/False/None as true/false/null, tuples as
 * arrays, trailing commas dropped, separators ", " and ": ", numbers unchanged.  A lone
 * surrogate escape becomes U+FFFD.  Input it was not made for gives some output without
 * reading outside s. */
tp_status tp_python_literal_to_json(tp_buf *out, const uint8_t *s, size_t n);

#endif
