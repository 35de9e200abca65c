"""What a format is, and the grammar pieces the families share."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from ..grammar import (
    Grammar,
    Lit,
    Node,
    Program,
    Ref,
    ahead,
    chars,
    children,
    choice,
    cut,
    eof,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._guard import guard_markers
from ._repair import derive_repair

ReasoningMode = Literal["none", "optional"]
CallInReasoning = Literal["ends_reasoning", "text"]


@dataclass(frozen=True)
class Format:
    """A model family's output format.

    families / model_ids: who emits it; model_ids are Hugging Face ids or glob patterns
    (``Qwen/Qwen3-*``) that format_for_model() matches.
    reasoning: "none" (no reasoning block) or "optional" (a block may open the output).
    reasoning_in_prompt: the default for whether the chat template already opened the
    reasoning block, so the output starts inside it (the "start_in_reasoning" entry).
    call_in_reasoning: what a call marker inside unfinished reasoning means: the implicit
    end of the reasoning ("ends_reasoning") or reasoning text ("text").
    needs_tools: the arguments are typed by the tool schemas (XML-style parameters).
    argument_notation: how the output writes arguments that carry their own types ("JSON",
    "Python literals", ...); they are always delivered as JSON.
    markers: the format's marker strings; they never reach content or reasoning text: one
    met where the format has no place for it is an `unexpected` error and dropped
    (_guard.py rewrites the grammar so).  Reasoning is guarded where a call marker ends
    it (call_in_reasoning "ends_reasoning"); where a call in reasoning is reasoning text
    (a draft), so are the markers of that draft, and only the reasoning block's own
    markers are guarded there (a second opener inside the block).
    text_markers: markers that may stand in text as they are (a REPL prompt, a word):
    content and reasoning keep them.
    reasoning_openers: the texts a rendered prompt ends with when the chat template opened
    the reasoning, for a format whose reasoning is not a leading block with opening
    markers of its own (which say it for such a block): gpt-oss's analysis channel.
    call_markers: (the marker that opens a call, the one that closes it), where a call
    has both: a call ends only once its closing marker has arrived.
    other_call_closers: markers that also end a call whose own closing marker is left
    out (gemma4's end of turn): a call ends only once one of them has arrived.
    tool_calls: False for a model family that writes reasoning and an answer but no tool
    calls (a reasoning-only format; its text is parsed, no call is ever made).
    carries_ids: the output carries tool call ids (else they are generated).
    fallback: a raw-text convention for models with no native format (prompted to write
    calls this way); format_for_model never picks it, so it has no model_ids.
    repair_grammar: the grammar StreamParser(repair=True) runs (lenient arguments, calls
    the end of the output cuts off closed by it); by default derived from the grammar
    (formats/_repair.py), given only by a format that salvages more than that.
    """

    name: str
    grammar: Grammar = field(repr=False)
    description: str = ""
    aliases: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    model_ids: tuple[str, ...] = ()
    reasoning: ReasoningMode = "none"
    reasoning_in_prompt: bool = False
    call_in_reasoning: CallInReasoning = "text"
    reasoning_openers: tuple[str, ...] = ()
    needs_tools: bool = False
    argument_notation: str = "JSON"
    markers: tuple[str, ...] = ()
    text_markers: tuple[str, ...] = ()
    call_markers: tuple[str, str] | None = None
    other_call_closers: tuple[str, ...] = ()
    parallel_calls: bool = True
    tool_calls: bool = True
    carries_ids: bool = False
    fallback: bool = False
    examples: tuple[str, ...] = field(default=())
    repair_grammar: Grammar | None = field(default=None, repr=False)
    # the grammar as the module wrote it, before the marker guard (what a reading of the
    # format's structure wants: its reasoning markers, say)
    written_grammar: Grammar = field(init=False, repr=False, compare=False)
    written_repair_grammar: Grammar | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.repair_grammar is None:
            repair = derive_repair(
                self.grammar, self.call_markers, self.other_call_closers, self.markers
            )
            object.__setattr__(self, "repair_grammar", repair)
        object.__setattr__(self, "written_grammar", self.grammar)
        object.__setattr__(self, "written_repair_grammar", self.repair_grammar)
        if self.fallback:  # a convention in plain text: its markers are text elsewhere
            return
        guarded, in_reasoning = self._guarded_markers()
        object.__setattr__(self, "grammar", guard_markers(self.grammar, guarded, in_reasoning))
        assert self.repair_grammar is not None
        repair = guard_markers(self.repair_grammar, guarded, in_reasoning)
        object.__setattr__(self, "repair_grammar", repair)

    @cached_property
    def export_grammar(self) -> Grammar:
        """The grammar the exports lower: its texts end at the markers the parser reports
        there, and never hold one (a grammar never writes a stray marker)."""
        if self.fallback:
            return self.grammar
        # (the reasoning block's own markers are not excluded from its text there: Lark's
        # lowering of a text that ends at both <think> and </think> refuses "<tool_call>"
        # inside it, which a format whose call markers are text in reasoning allows)
        guarded, in_reasoning = self._guarded_markers(block_markers=False)
        return guard_markers(self.written_grammar, guarded, in_reasoning, strays=False)

    def _guarded_markers(self, block_markers: bool = True) -> tuple[list[str], list[str]]:
        """(the markers content is guarded against, those reasoning is): where a call's
        markers are text in reasoning (call_in_reasoning="text"), the reasoning block's
        own markers still are not (a second opener inside the block), with
        block_markers."""
        guarded = [m for m in self.markers if m not in self.text_markers]
        if self.call_in_reasoning == "ends_reasoning":
            return guarded, guarded
        if not block_markers:
            return guarded, []
        block = _reasoning_block_literals(self.written_grammar)
        return guarded, [m for m in guarded if m in block]

    @cached_property
    def program(self) -> Program:
        return self.grammar.compile()

    @cached_property
    def program_bytes(self) -> bytes:
        return self.program.to_bytes()

    @cached_property
    def repair_program(self) -> Program:
        assert self.repair_grammar is not None
        return self.repair_grammar.compile()

    def entry(self, reasoning_in_prompt: bool | None) -> str:
        in_prompt = self.reasoning_in_prompt if reasoning_in_prompt is None else reasoning_in_prompt
        if in_prompt:
            if "start_in_reasoning" not in self.grammar.entries:
                raise ValueError(f"format {self.name!r} has no reasoning block to start in")
            return "start_in_reasoning"
        return "start"


def _reasoning_block_literals(grammar: Grammar) -> set[str]:
    """The literals of a grammar's reasoning block: its "think" and "reasoning_rest"
    rules (the block's opener and closer)."""
    found: set[str] = set()
    seen: set[str] = set()

    def walk(node: Node) -> None:
        if isinstance(node, Lit):
            found.add(node.text.decode("utf-8", "replace"))
        elif isinstance(node, Ref):
            if node.name in ("think", "reasoning_rest") and node.name not in seen:
                seen.add(node.name)
                walk(grammar.rules[node.name])
        else:
            for child in children(node):
                walk(child)

    for name in ("think", "reasoning_rest"):
        if name in grammar.rules:
            walk(Ref(name))
    return found


def skip_past(marker: str) -> Node:
    """Error recovery: drop input up to and including the next marker (or to the end)."""
    return seq(until(marker), opt(lit(marker)))


def skip_rest() -> Node:
    """Error recovery: drop the rest of the input."""
    return chars("\x00-\xff")


def closing(marker: str, repair: bool = False) -> Node:
    """A closing marker; in a repair grammar the end of the output may stand for it, and
    the call it closes is then marked repaired."""
    if not repair:
        return lit(marker)
    return choice(lit(marker), tag("repaired", eof()))


def call_block(open_marker: str, close_marker: str, body: Node, *, repair: bool = False) -> Node:
    """open_marker, then a committed call envelope that recovers at close_marker.

    The tool_call tag closes only after close_marker: a call ends once its closing
    marker has arrived, never at the end of its arguments (in a repair grammar, the end
    of the output may stand for the marker)."""
    return seq(
        lit(open_marker),
        cut(),
        recover(
            tag("tool_call", seq(ws(), body, ws(), closing(close_marker, repair))),
            skip_past(close_marker),
        ),
        ws(),
    )


def think_block(open_marker: str, close_marker: str, *ends: str) -> tuple[Node, Node]:
    """(the block from its opening marker, the rest of a block already open): reasoning
    up to close_marker (consumed, with the whitespace after it) or up to one of `ends`,
    markers that end reasoning implicitly (not consumed)."""
    rest = seq(
        tag("reasoning", until(close_marker, *ends)),
        opt(seq(lit(close_marker), ws())),
    )
    return seq(lit(open_marker), cut(), rest), rest


def call_array(element: Node, close: str | None, *, repair: bool = False) -> Node:
    """A JSON array of calls, ``[`` element, element ... ``]``, then the block's closing
    marker `close` (if the format has one), for the formats that list calls in one array.

    Each element is a call envelope that closes only once what follows it is certain: a
    comma (another call comes) or ``]`` and the closing marker.  So a call never ends
    before the text that completes it has arrived, and a truncated array delivers only
    the calls already followed by a comma.  In a repair grammar the end of the output may
    stand for what follows a call (the call is then marked repaired) and for the array's
    closing."""
    end = seq(lit("]"), ws(), lit(close)) if close else lit("]")
    follows = [lit(","), end] + ([tag("repaired", eof())] if repair else [])
    call = tag("tool_call", seq(element, ws(), ahead(choice(*follows))))
    last = choice(end, eof()) if repair else end
    return seq(lit("["), ws(), choice(last, seq(call, many(seq(lit(","), ws(), call)), last)))


def reopened(open_marker: str) -> Node:
    """The rest of a reasoning block the chat template opened ("reasoning_rest"): an
    opening marker the model writes anyway is dropped, since it is a marker and never
    reasoning text (models trained with the opener in the template still write it now
    and then, and a serving stack may not know which of the two it has)."""
    return seq(opt(seq(ws(), lit(open_marker))), ref("reasoning_rest"))


def reasoning_rules(open_marker: str, close_marker: str, *ends: str) -> dict[str, Node]:
    """The entry rules of a format whose output may open with a reasoning block: "start"
    (optional whitespace, an optional block, then the format's "body" rule) and
    "start_in_reasoning" (the chat template already opened the block).  `ends` are the
    markers that end the reasoning implicitly, as in think_block().  When the template
    opened the block, an opening marker the model writes anyway is dropped (reopened)."""
    think, rest = think_block(open_marker, close_marker, *ends)
    return {
        "start": seq(ws(), opt(ref("think")), ref("body")),
        "start_in_reasoning": seq(
            opt(seq(ws(), lit(open_marker))), ref("reasoning_rest"), ref("body")
        ),
        "think": think,
        "reasoning_rest": rest,
    }
