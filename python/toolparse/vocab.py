"""Token ids in: a tokenizer's tokens as the bytes they stand for.

A ``Vocab`` is built once per tokenizer and shared by every stream (and thread): one
contiguous byte table plus offsets in the C core, so ``StreamParser.feed_tokens(ids)``
turns ids into bytes without Python objects per token.  A character split across tokens
is held by the parser until its last byte arrives, as for any other input.

Token strings are decoded the way the tokenizer's own decoder would:

- byte-level BPE (GPT-2, Llama 3, Qwen): each character stands for one byte through the
  GPT-2 byte-to-unicode table (``Ġ`` is a space, ``Ċ`` a newline);
- SentencePiece (Llama 2, Mistral, Gemma): ``▁`` is a space and ``<0x0A>``-style tokens
  are single bytes;
- added tokens (special tokens such as ``<tool_call>``) are their own text.
"""

from __future__ import annotations

import array
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ._native import NativeVocab

Encoding = Literal["byte_level", "sentencepiece", "utf8"]
_SP_SPACE = "\u2581"
_SP_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _byte_level_table() -> dict[str, int]:
    """GPT-2's byte-to-unicode table, inverted: character -> byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    chars = dict(zip(printable, printable, strict=True))
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
    return {chr(c): b for b, c in chars.items()}


_BYTE_LEVEL = _byte_level_table()


def token_bytes(token: str, encoding: Encoding) -> bytes:
    """The bytes one token string stands for."""
    if encoding == "byte_level":
        try:
            return bytes(_BYTE_LEVEL[c] for c in token)
        except KeyError:  # not a byte-level token (a plain added token)
            return token.encode("utf-8")
    if encoding == "sentencepiece":
        match = _SP_BYTE.fullmatch(token)
        if match:
            return bytes([int(match.group(1), 16)])
        return token.replace(_SP_SPACE, " ").encode("utf-8")
    return token.encode("utf-8")


class Vocab:
    """Token id -> bytes for one tokenizer.

    tokens: the bytes of each token id in order (None for an id that is unused).
    special: ids of special tokens (added tokens), for formats whose markers are single
    tokens.
    """

    def __init__(self, tokens: Sequence[bytes | None], *, special: Iterable[int] = ()) -> None:
        offsets = array.array("I", [0])
        table = bytearray()
        for token in tokens:
            table += token or b""
            offsets.append(len(table))
        self._tokens = [bytes(t) if t is not None else b"" for t in tokens]
        self.special = frozenset(i for i in special if 0 <= i < len(self._tokens))
        flags = bytearray(len(self._tokens))
        for i in self.special:
            flags[i] = 1
        self.native = NativeVocab(bytes(table), offsets, bytes(flags))
        # the text of each special token (what a format's marker must equal to need it)
        self.special_texts = frozenset(self._tokens[i] for i in self.special if self._tokens[i])

    def __len__(self) -> int:
        return len(self._tokens)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens, {len(self.special)} special)"

    def token(self, token_id: int) -> bytes:
        return self._tokens[token_id]

    def special_flags(self, strings: Sequence[bytes]) -> bytes:
        """One flag per program string: whether it is a special token's text."""
        return bytes(1 if s in self.special_texts else 0 for s in strings)

    def special_starts(self, ids: Sequence[int]) -> list[int]:
        """Where in the bytes of these ids the special tokens start."""
        starts, at = [], 0
        for i in ids:
            if i in self.special:
                starts.append(at)
            at += len(self._tokens[i])
        return starts

    def decode(self, ids: Iterable[int]) -> bytes:
        """The bytes of these token ids (what feed_tokens feeds)."""
        tokens = self._tokens
        try:
            return b"".join(tokens[i] for i in ids)
        except (IndexError, TypeError):
            raise ValueError(f"a token id is not in the vocab (size {len(self)})") from None

    @classmethod
    def from_strings(
        cls,
        vocab: Mapping[str, int],
        encoding: Encoding,
        *,
        added: Mapping[str, int] | None = None,
        special: Iterable[int] = (),
    ) -> Vocab:
        """From a token-string -> id table as tokenizers give it; `added` tokens are their
        own text whatever the encoding."""
        size = max([*vocab.values(), *(added or {}).values()], default=-1) + 1
        tokens: list[bytes | None] = [None] * size
        for text, token_id in vocab.items():
            tokens[token_id] = token_bytes(text, encoding)
        for text, token_id in (added or {}).items():
            tokens[token_id] = text.encode("utf-8")
        return cls(tokens, special=special)

    @classmethod
    def from_tokenizer(cls, tokenizer: Any) -> Vocab:
        """From a `tokenizers.Tokenizer` or a transformers fast tokenizer (anything with
        the tokenizers JSON: `.to_str()`, or `.backend_tokenizer`)."""
        backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
        if not hasattr(backend, "to_str"):
            raise TypeError("expected a tokenizers.Tokenizer or a transformers fast tokenizer")
        config = json.loads(backend.to_str())
        added = {t["content"]: t["id"] for t in config.get("added_tokens") or ()}
        special = [t["id"] for t in config.get("added_tokens") or () if t.get("special")]
        vocab = backend.get_vocab(with_added_tokens=False)
        return cls.from_strings(vocab, _encoding(config), added=added, special=special)


def _encoding(config: Mapping[str, Any]) -> Encoding:
    """Which token-string encoding a tokenizers JSON config uses, from its decoder (and
    pre-tokenizer)."""
    text = json.dumps([config.get("decoder"), config.get("pre_tokenizer")])
    if '"ByteLevel"' in text:
        return "byte_level"
    if '"ByteFallback"' in text or '"Metaspace"' in text or _SP_SPACE in text:
        return "sentencepiece"
    return "utf8"
