/* toolparse.h: the public C API of the toolparse core. */
#ifndef TOOLPARSE_H
#define TOOLPARSE_H

#include "batch.h"
#include "common.h"
#include "event.h"
#include "json.h"
#include "parse_limits.h"
#include "pool.h"
#include "program.h"
#include "stream.h"
#include "tools.h"
#include "trie.h"
#include "vocab.h"

#endif
