"""toolparse against vLLM's and SGLang's own parsers, token by token:
python benchmarks/peers.py [--quick] [--plot PATH] [--json PATH] [--streams N]
[--peers vllm,sglang|none] [--only TEXT].

The same model responses go through every parser, one token per call:

- toolparse, one stream: `StreamParser.feed(text)` with each token's text, and
  `StreamParser.feed_tokens(id)` with a `toolparse.Vocab` built from the same tokenizer;
- toolparse, a batch: `BatchParser.feed_slots`, N copies of the response as concurrent
  streams fed in lockstep (every stream at the same position, which flatters the batch a
  little against streams at different places), one token per stream per step; the cost
  is per stream per step;
- vLLM, where it is importable: its reasoning parser's `extract_reasoning_streaming` over
  the tokens up to `</think>` and its tool parser's `extract_tool_calls_streaming` over the
  rest, each given the text the way its server gives it; and the server's per-chunk path,
  `ChatStreamProcessor.step` over the `Parser` that `ParserManager` composes for
  `--tool-call-parser hermes|qwen3_coder --reasoning-parser qwen3`, for toolparse's
  adapter (`toolparse_qwen3` / `toolparse_qwen3_coder`, both parsers) and for the floor:
  the cheapest tool parser there can be (each token's text out as one argument fragment,
  its delta built without validation), which is what vLLM's own per-chunk work costs
  around any tool parser;
- SGLang, where it is importable: its `ReasoningParser("qwen3")` and
  `FunctionCallParser(tools, "qwen25"|"qwen3_coder")`, fed in its chat serving's order,
  and the same with toolparse's detectors.

The responses: Qwen3 JSON calls (a `<think>` block, a line of content, then one or four
`<tool_call>` calls whose arguments are 100 B, 1 KB, 10 KB or 50 KB of JSON each), a
Qwen3-Coder XML call (a 10 KB source file as a string parameter) and 50 KB of content
with no call.  They are tokenized by a byte-level BPE trained here on generated text of
the same kind, with Qwen's markers as added (not special) tokens, as Qwen's own tokenizer
has them; a token that ends inside a UTF-8 character gives an empty text delta, and the
character comes with the next one, as a server's detokenizer does.

Per parser and response the table gives: the median cost of one token (toolparse: of 32
tokens timed together, divided by 32, since the clock costs too much to time one); the
same median over the tokens outside calls (reasoning and content) and over those inside
argument values; the whole response's time (per stream for the batch); the cost over the
last tenth of the tokens against the first tenth (the first tenth is reasoning, so a
parser whose calls cost more than its text shows > 1 on short responses), and the same
within the argument tokens alone (a cost that grows with the output shows here); and
whether the calls it produced by the end (names and arguments) are the response's.
Nothing is asserted: the figures are for reading.  --quick runs the toolparse paths only,
once each, in a few seconds (CI keeps it from rotting); a peer that is not installed is
skipped with a line saying why.  --plot PATH draws the cost per token against the
position in the stream, one panel per response (needs matplotlib, imported only then).
"""

from __future__ import annotations

import argparse
import array
import codecs
import gc
import importlib.metadata
import itertools
import json
import logging
import os
import platform
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # the generators sit beside this script

try:
    import toolparse
except ImportError as error:  # pragma: no cover - a message beats a traceback here
    sys.exit(f"peers.py needs toolparse installed (pip install .): {error}")

try:
    import tokenizers
except ImportError as error:  # pragma: no cover
    sys.exit(f"peers.py needs the tokenizers package (pip install '.[test]'): {error}")

BLOCK = 32  # toolparse tokens timed together
ADDED_TOKENS = ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>")
VOCAB_SIZE = 8192
SIZES = {"100B": 100, "1KB": 1_000, "10KB": 10_000, "50KB": 50_000}
CALL_NAMES = ("store_results", "get_weather", "search_docs", "lookup_user")
CODER_SIZE = 10_000
CONTENT_SIZE = 50_000


# -- responses -------------------------------------------------------------------------------


@dataclass
class Response:
    """A model response, its parts' byte spans by phase, and the calls it holds."""

    name: str
    kind: str  # "json" (Qwen3 / Hermes) or "xml" (Qwen3-Coder)
    text: str
    phases: list[tuple[int, str]]  # (end byte, phase) in order: "text", "args", "markup"
    calls: list[tuple[str, Any]]
    tools: list[dict[str, Any]]

    @property
    def toolparse_format(self) -> str:
        return "qwen3" if self.kind == "json" else "qwen3_coder"


class Builder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.phases: list[tuple[int, str]] = []
        self.size = 0

    def add(self, text: str, phase: str) -> None:
        self.parts.append(text)
        self.size += len(text.encode())
        self.phases.append((self.size, phase))


def arguments(size: int, seed: int) -> dict[str, Any]:
    """A JSON arguments object of about `size` bytes: a few settings, then records (strings
    with escapes and non-ASCII, numbers of every form, literals, nested arrays)."""
    rng = random.Random(seed)
    args: dict[str, Any] = {
        "query": rng.choice(["forecast Zürich", "weather in Paris", "東京 rain"]),
        "days": rng.randint(1, 14),
        "units": "metric",
        "fields": ["temperature", "wind"],
    }
    if size <= 150:
        return args
    results: list[Any] = []
    args["results"] = results
    length = len(json.dumps(args, ensure_ascii=False).encode())
    while length < size:
        record = json.loads(data._record(rng))
        results.append(record)
        length += len(json.dumps(record, ensure_ascii=False).encode()) + 2
    return args


def tools_for(names: Iterable[str]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in names
    ]


def opening(b: Builder) -> None:
    """A reasoning block and a line of content, as Qwen3 writes them before its calls."""
    prose = data.content(1_600).decode()
    b.add("<think>\n", "markup")
    b.add(prose[:1_300].strip(), "text")
    b.add("\n</think>\n\n", "markup")
    b.add(prose[1_300:].strip(), "text")
    b.add("\n", "text")


def json_response(label: str, size: int, count: int) -> Response:
    b = Builder()
    opening(b)
    calls = []
    for k in range(count):
        name, args = CALL_NAMES[k], arguments(size, seed=size * 10 + k)
        calls.append((name, args))
        b.add(f'<tool_call>\n{{"name": "{name}", "arguments": ', "markup")
        b.add(json.dumps(args, ensure_ascii=False), "args")
        b.add("}\n</tool_call>" + ("\n" if k < count - 1 else ""), "markup")
    name = f"json {label} x{count}"
    return Response(name, "json", "".join(b.parts), b.phases, calls, tools_for(CALL_NAMES))


def xml_response(size: int) -> Response:
    b = Builder()
    opening(b)
    code = data.source_code(size).decode()
    head, tail = data.CODER_CALL
    b.add(head.decode(), "markup")
    b.add(code, "args")
    b.add(tail.decode(), "markup")
    calls = [("write_file", {"path": data.WRITE_FILE_PATH, "content": code})]
    label = f"xml {size // 1000}KB x1"
    return Response(label, "xml", "".join(b.parts), b.phases, calls, data.WRITE_FILE_TOOLS)


def content_response(size: int) -> Response:
    """No call: the reasoning block, then `size` bytes of content (prose with a `<` now
    and then that starts no marker)."""
    b = Builder()
    opening(b)
    b.add(data.content(size).decode(), "text")
    label = f"content {size // 1000}KB"
    return Response(label, "json", "".join(b.parts), b.phases, [], tools_for(CALL_NAMES))


def responses() -> list[Response]:
    out = [json_response(label, size, n) for n in (1, 4) for label, size in SIZES.items()]
    out.append(xml_response(CODER_SIZE))
    out.append(content_response(CONTENT_SIZE))
    return out


# -- tokens ------------------------------------------------------------------------------------


def train_tokenizer(texts: Sequence[str]) -> tokenizers.Tokenizer:
    """A byte-level BPE (as Qwen's), trained on generated JSON, code and prose of the kinds
    the responses hold, with the chat and call markers as added tokens."""
    model = tokenizers.Tokenizer(tokenizers.models.BPE())
    model.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    model.train_from_iterator(texts, trainer)
    # Qwen's tokenizer has <think>, <tool_call> and the rest as added tokens that are not
    # "special" (so a detokenizer keeps them in the text).
    model.add_tokens(
        [tokenizers.AddedToken(t, special=False, normalized=False) for t in ADDED_TOKENS]
    )
    return model


def training_texts() -> list[str]:
    arg_text = json.dumps(arguments(200_000, seed=7), ensure_ascii=False)
    code = data.source_code(100_000).decode()
    prose = data.prose(200_000).decode("utf-8", "ignore")
    return [arg_text, code, prose]


@dataclass
class Tokens:
    ids: list[int]
    pieces: list[bytes]  # each token's bytes
    texts: list[str]  # each token's text delta (complete characters only)
    phases: list[str]  # the phase of each token's first byte

    def __len__(self) -> int:
        return len(self.ids)


def tokenize(response: Response, tokenizer: tokenizers.Tokenizer, vocab: toolparse.Vocab) -> Tokens:
    ids = tokenizer.encode(response.text).ids
    pieces = [vocab.token(i) for i in ids]
    if b"".join(pieces) != response.text.encode():
        raise RuntimeError(f"{response.name}: the tokens do not spell the response")
    decoder = codecs.getincrementaldecoder("utf-8")()
    texts = [decoder.decode(piece) for piece in pieces]
    phases, at, span = [], 0, 0
    for piece in pieces:
        while response.phases[span][0] <= at:
            span += 1
        phases.append(response.phases[span][1])
        at += len(piece)
    return Tokens(ids, pieces, texts, phases)


# -- timing ------------------------------------------------------------------------------------


def end_start(costs: Sequence[float]) -> float | None:
    """Cost over the last tenth of these blocks against the first tenth (medians)."""
    if len(costs) < 2:
        return None
    tenth = max(1, len(costs) // 10)
    return statistics.median(costs[-tenth:]) / statistics.median(costs[:tenth])


@dataclass
class Run:
    """One parser over one response: cost per token by block, and the outcome."""

    parser: str
    family: str  # the parser without the format's name: one colour in the plot
    block: int  # tokens per timed block
    ns_per_token: list[float]  # per block, the median over the repeats
    total_s: float  # the whole response (median over repeats), per stream for a batch
    calls: list[tuple[str, Any]] | None  # None: not read, or not the same every time
    # per phase ("text": reasoning and content, "args": argument values), the costs of
    # the blocks all of whose tokens are in that phase, in order
    phase_costs: dict[str, list[float]] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.ns_per_token)

    def phase_median(self, phase: str) -> float | None:
        costs = self.phase_costs.get(phase)
        return statistics.median(costs) if costs else None

    @property
    def end_start(self) -> float | None:
        return end_start(self.ns_per_token)

    @property
    def args_end_start(self) -> float | None:
        return end_start(self.phase_costs.get("args", []))


def blocks_of(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[k : k + size] for k in range(0, len(items), size)]


def timed(blocks: Sequence[Sequence[Any]], feed: Callable[[Any], object]) -> list[int]:
    """Feeds each block's items one call each; the nanoseconds each block took."""
    clock = time.perf_counter_ns
    marks = [clock()]
    append = marks.append
    for items in blocks:
        for item in items:
            feed(item)
        append(clock())
    return [b - a for a, b in itertools.pairwise(marks)]


class Session:
    """One parser instance over one response: feed(item) per token, then finish()."""

    items: Sequence[Any]  # what feed() takes, one per token
    streams = 1

    def feed(self, item: Any) -> object:
        raise NotImplementedError

    def finish(self) -> list[tuple[str, Any]] | None:
        raise NotImplementedError


def measure(
    name: str,
    family: str,
    make: Callable[[], Session],
    tokens: Tokens,
    block: int,
    repeats: int,
) -> Run:
    """Times `repeats` sessions, each a new parser made outside the timing, the garbage
    collector off; the cost of each block is its median over the repeats.  A first,
    untimed session warms the caches for the fast paths (block > 1): the peers' first
    tokens cost far more than a cache miss anyway, and they get no spare run of minutes."""
    per_block: list[list[int]] = []
    totals: list[float] = []
    outcomes: list[list[tuple[str, Any]] | None] = []
    streams = 1
    gc.collect()
    gc.disable()
    try:
        if block > 1:
            warm = make()
            timed(blocks_of(warm.items, block), warm.feed)
            warm.finish()
        for _ in range(repeats):
            session = make()
            streams = session.streams
            start = time.perf_counter()
            per_block.append(timed(blocks_of(session.items, block), session.feed))
            outcomes.append(session.finish())
            totals.append((time.perf_counter() - start) / streams)
            del session
    finally:
        gc.enable()
    sizes = [len(b) for b in blocks_of(tokens.ids, block)]
    costs = [
        statistics.median(column) / (size * streams)
        for column, size in zip(zip(*per_block, strict=True), sizes, strict=True)
    ]
    # the calls of every repeat must be the same to count as read
    calls = outcomes[0] if all(o == outcomes[0] for o in outcomes) else None
    run = Run(name, family, block, costs, statistics.median(totals), calls)
    for phase in ("text", "args"):
        run.phase_costs[phase] = [
            cost
            for cost, phases in zip(costs, blocks_of(tokens.phases, block), strict=True)
            if phases.count(phase) == len(phases)
        ]
    return run


def message_calls(message: toolparse.Message) -> list[tuple[str, Any]]:
    return [(call.name, call.arguments) for call in message.tool_calls]


# -- toolparse ---------------------------------------------------------------------------------


class TextSession(Session):
    def __init__(self, response: Response, tokens: Tokens) -> None:
        self.parser = toolparse.StreamParser(response.toolparse_format, tools=response.tools)
        self.items = tokens.texts
        self.feed = self.parser.feed  # type: ignore[method-assign]

    def finish(self) -> list[tuple[str, Any]]:
        self.parser.finish()
        return message_calls(self.parser.message)


class TokenSession(Session):
    def __init__(self, response: Response, tokens: Tokens, vocab: toolparse.Vocab) -> None:
        self.parser = toolparse.StreamParser(
            response.toolparse_format, tools=response.tools, vocab=vocab
        )
        self.items = tokens.ids
        self.feed = self.parser.feed_tokens  # type: ignore[method-assign]

    def finish(self) -> list[tuple[str, Any]]:
        self.parser.finish()
        return message_calls(self.parser.message)


class BatchSession(Session):
    """`streams` copies of the response in lockstep: one feed_slots call per step."""

    def __init__(
        self, response: Response, tokens: Tokens, vocab: toolparse.Vocab, streams: int
    ) -> None:
        self.batch = toolparse.BatchParser(
            response.toolparse_format, vocab=vocab, tools=response.tools
        )
        self.streams = streams
        slots = array.array("I", [self.batch.add(k) for k in range(streams)])
        self.items = [array.array("I", [token] * streams) for token in tokens.ids]
        feed_slots = self.batch.feed_slots
        # every event read as objects, as a server turning them into deltas would
        self.feed = lambda step: list(feed_slots(slots, step))  # type: ignore[method-assign]

    def finish(self) -> list[tuple[str, Any]] | None:
        outcomes = []
        for k in range(self.streams):
            end = self.batch.finish(k)[-1]
            assert isinstance(end, toolparse.End)
            outcomes.append(message_calls(end.message))
        return outcomes[0] if all(o == outcomes[0] for o in outcomes) else None


# -- vLLM ------------------------------------------------------------------------------------


def import_vllm() -> dict[str, Any]:
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    warnings.filterwarnings("ignore")
    import vllm
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import DelegatingParser, ParserManager
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    import toolparse.adapters.vllm  # noqa: F401  (registers toolparse_<format>, as the plugin entry does)

    return {
        "version": vllm.__version__,
        "request": ChatCompletionRequest,
        "processor": ChatStreamProcessor,
        "parsers": ParserManager,
        "reasoning": ReasoningParserManager,
        "tools": ToolParserManager,
        "floor": floor_parser(DelegatingParser),
    }


def floor_parser(delegating: Any) -> Any:
    """The cheapest tool parser there can be on vLLM's per-chunk path, composed as vLLM
    composes every pair: each token's text goes out as an argument fragment of call 0,
    its delta built without validation as toolparse's adapter builds its own.  What it
    costs is vLLM's own work per chunk, the floor under any tool parser there (its calls
    are not the response's)."""
    from vllm.tool_parsers import ToolParser

    from toolparse.adapters.vllm import _message, _tool_call

    class FloorToolParser(ToolParser):  # type: ignore[misc]
        engine_based_streaming = True

        def extract_tool_calls_streaming(self, *args: Any) -> Any:
            return _message({"tool_calls": [_tool_call(0, None, None, args[2])]})

    return type("FloorParser", (delegating,), {"tool_parser_cls": FloorToolParser})


VLLM_TOOL_PARSER = {"json": "hermes", "xml": "qwen3_coder"}
VLLM_REASONING_PARSER = "qwen3"


def vllm_calls(deltas: Iterable[Any]) -> list[tuple[str, Any]] | None:
    """The calls a client accumulates from vLLM's deltas."""
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        for call in (delta.tool_calls if delta is not None else None) or ():
            entry = calls.setdefault(call.index, {"name": None, "arguments": ""})
            function = call.function
            if function is not None:
                entry["name"] = entry["name"] or function.name
                entry["arguments"] += function.arguments or ""
    try:
        return [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    except ValueError:
        return None


def vllm_request(vllm: dict[str, Any], response: Response) -> Any:
    return vllm["request"](
        model="m",
        messages=[{"role": "user", "content": "Store the results."}],
        tools=response.tools,
        tool_choice="auto",
    )


class VllmParserSession(Session):
    """vLLM's reasoning parser over the tokens up to `</think>`, its tool parser over the
    rest, each called as its server calls it: a parser that is not engine-based gets the
    whole text so far (and the ids so far) besides the new piece, built the same way."""

    def __init__(
        self, vllm: dict[str, Any], response: Response, tokens: Tokens, tokenizer: Any
    ) -> None:
        self.request = vllm_request(vllm, response)
        reasoning_cls = vllm["reasoning"].get_reasoning_parser(VLLM_REASONING_PARSER)
        tool_cls = vllm["tools"].get_tool_parser(VLLM_TOOL_PARSER[response.kind])
        self.reasoning = reasoning_cls(tokenizer)
        self.tool = tool_cls(tokenizer, self.request.tools)
        self.tokens = tokens
        self.split = tokens.ids.index(tokenizer.convert_tokens_to_ids("</think>")) + 1
        self.items = range(len(tokens))
        self.deltas: list[Any] = []
        self.text, self.ids = "", []  # what the current parser has been given so far

    def feed(self, k: int) -> object:
        text, token = self.tokens.texts[k], self.tokens.ids[k]
        parser = self.reasoning if k < self.split else self.tool
        if k == self.split:
            self.text, self.ids = "", []
        if parser.engine_based_streaming:
            previous, current, previous_ids, current_ids = "", text, [], [token]
        else:
            previous, previous_ids = self.text, self.ids
            current, current_ids = previous + text, [*previous_ids, token]
            self.text, self.ids = current, current_ids
        if k < self.split:
            delta = parser.extract_reasoning_streaming(
                previous, current, text, previous_ids, current_ids, [token]
            )
        else:
            delta = parser.extract_tool_calls_streaming(
                previous, current, text, previous_ids, current_ids, [token], self.request
            )
        self.deltas.append(delta)
        return delta

    def finish(self) -> list[tuple[str, Any]] | None:
        if self.tool.engine_based_streaming:
            self.deltas.append(self.tool.finish_streaming())
        else:
            rest = self.tool.get_remaining_unstreamed_args()
            calls = [d for d in self.deltas if d is not None and d.tool_calls]
            if rest and calls:
                calls[-1].tool_calls[-1].function.arguments += rest
        return vllm_calls(self.deltas)


class VllmServerSession(Session):
    """vLLM's per-chunk serving path: ChatStreamProcessor.step per token, over the Parser
    that ParserManager composes for --tool-call-parser / --reasoning-parser."""

    def __init__(
        self,
        vllm: dict[str, Any],
        response: Response,
        tokens: Tokens,
        tokenizer: Any,
        toolparse: bool = False,
        floor: bool = False,
    ) -> None:
        own = (VLLM_TOOL_PARSER[response.kind], VLLM_REASONING_PARSER)
        names = ("toolparse_" + response.toolparse_format,) * 2 if toolparse else own
        cls = (
            vllm["floor"]
            if floor
            else vllm["parsers"].get_parser(
                tool_parser_name=names[0], reasoning_parser_name=names[1], enable_auto_tools=True
            )
        )
        request = vllm_request(vllm, response)
        parser = cls(tokenizer, request.tools)
        self.step = vllm["processor"](request, parser, enable_auto_tools=True, parser_cls=cls).step
        self.prompt = tokenizer.encode(
            "<|im_start|>user\nStore the results.<|im_end|>\n<|im_start|>assistant\n"
        )
        self.tokens = tokens
        self.last = len(tokens) - 1
        self.items = range(len(tokens))
        self.deltas: list[Any] = []

    def feed(self, k: int) -> object:
        finish = "stop" if k == self.last else None
        step = self.step(self.tokens.texts[k], [self.tokens.ids[k]], finish, self.prompt)
        self.deltas.append(step.delta)
        return step

    def finish(self) -> list[tuple[str, Any]] | None:
        return vllm_calls(self.deltas)


# -- SGLang ----------------------------------------------------------------------------------


def import_sglang() -> dict[str, Any]:
    logging.disable(logging.CRITICAL)  # its detectors log every parse error
    warnings.filterwarnings("ignore")
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    import toolparse.adapters.sglang  # noqa: F401  (registers toolparse_<format>, as the plugin entry does)

    return {
        "version": importlib.metadata.version("sglang"),
        "tool": Tool,
        "calls": FunctionCallParser,
        "reasoning": ReasoningParser,
    }


SGLANG_TOOL_PARSER = {"json": "qwen25", "xml": "qwen3_coder"}


class SglangSession(Session):
    """SGLang's chat serving order: the reasoning parser first, its normal text to the
    function-call parser."""

    def __init__(
        self, sglang: dict[str, Any], response: Response, tokens: Tokens, toolparse: bool = False
    ) -> None:
        tools = [sglang["tool"](**tool) for tool in response.tools]
        if toolparse:  # as its chat serving builds them when a tool-call parser is active
            name = "toolparse_" + response.toolparse_format
            self.reasoning = sglang["reasoning"](
                name, stream_reasoning=True, tool_call_parser_active=True
            )
            self.calls = sglang["calls"](tools, name)
        else:
            self.reasoning = sglang["reasoning"]("qwen3", stream_reasoning=True)
            self.calls = sglang["calls"](tools, SGLANG_TOOL_PARSER[response.kind])
        self.items = tokens.texts
        self.results: list[Any] = []

    def feed(self, text: str) -> object:
        _, normal = self.reasoning.parse_stream_chunk(text)
        if normal:
            self.results.append(self.calls.parse_stream_chunk(normal))
        return normal

    def finish(self) -> list[tuple[str, Any]] | None:
        _, normal = self.reasoning.parse_stream_end()
        if normal:
            self.results.append(self.calls.parse_stream_chunk(normal))
        self.results.append(self.calls.parse_stream_end())
        calls: dict[int, dict[str, Any]] = {}
        for _, items in self.results:
            for item in items:
                entry = calls.setdefault(item.tool_index, {"name": None, "arguments": ""})
                entry["name"] = entry["name"] or item.name
                entry["arguments"] += item.parameters or ""
        try:
            return [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
        except ValueError:
            return None


# -- report ----------------------------------------------------------------------------------


def fmt_us(ns: float | None) -> str:
    if ns is None:
        return "-"
    us = ns / 1000
    return f"{us:.3f}" if us < 10 else f"{us:.1f}"


def fmt_ratio(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}"


def machine_line(peers: dict[str, str]) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [f"toolparse {toolparse.__version__}"]
    versions += [f"{name} {version}" for name, version in peers.items()]
    return f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}; " + ", ".join(
        versions
    )


HEADER = (
    "| response | parser | tokens | µs/token | outside calls | in arguments "
    "| total ms | end/start | args end/start | calls |"
)
RULE = "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"


def row(response: Response, tokens: Tokens, run: Run, expected: list[tuple[str, Any]]) -> str:
    ok = "ok" if run.calls == expected else ("unreadable" if run.calls is None else "WRONG")
    return (
        f"| {response.name} | {run.parser} | {len(tokens)} | {fmt_us(run.median)} "
        f"| {fmt_us(run.phase_median('text'))} | {fmt_us(run.phase_median('args'))} "
        f"| {run.total_s * 1e3:.2f} | {fmt_ratio(run.end_start)} "
        f"| {fmt_ratio(run.args_end_start)} | {ok} |"
    )


def plot(path: str, results: list[tuple[Response, Tokens, list[Run]]]) -> None:
    import matplotlib  # a benchmark-only dependency: imported only to plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 3
    rows = (len(results) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.4 * rows), squeeze=False)
    styles: dict[str, str] = {}
    for panel, (response, tokens, runs) in zip(axes.flat, results, strict=False):
        for run in runs:
            positions, costs = binned(run, len(tokens))
            color = styles.setdefault(run.family, f"C{len(styles)}")
            panel.plot(positions, [c / 1000 for c in costs], label=run.family, color=color, lw=1.2)
        panel.set_yscale("log")
        panel.set_title(f"{response.name} ({len(tokens)} tokens)", fontsize=10)
        panel.set_xlabel("token position")
        panel.set_ylabel("µs per token")
        panel.grid(True, which="both", alpha=0.3)
    for panel in list(axes.flat)[len(results) :]:
        panel.axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=9)
    figure.suptitle(
        "Cost of one token against its position in the stream (log scale); vLLM: hermes or "
        "qwen3_coder with qwen3 reasoning, SGLang: qwen25 or qwen3_coder with qwen3"
    )
    figure.tight_layout(rect=(0, 0.06, 1, 0.97))
    figure.savefig(path, dpi=110)


def binned(run: Run, count: int, bins: int = 200) -> tuple[list[float], list[float]]:
    """Medians over at most `bins` stretches of the stream, at their middle positions."""
    costs = run.ns_per_token
    per_bin = max(1, len(costs) // bins)
    positions, values = [], []
    for k in range(0, len(costs), per_bin):
        chunk = costs[k : k + per_bin]
        positions.append(min(count, (k + len(chunk) / 2) * run.block))
        values.append(statistics.median(chunk))
    return positions, values


# -- main --------------------------------------------------------------------------------------


@dataclass
class Setup:
    repeats: int  # toolparse single stream; the batch gets half
    streams: int
    vocab: toolparse.Vocab
    peers: dict[str, dict[str, Any]]
    hf_tokenizer: Any  # the transformers wrapper vLLM's parsers take


def run_response(response: Response, tokens: Tokens, setup: Setup) -> list[Run]:
    """Every parser over one response; prints a table row per parser."""
    vocab = setup.vocab
    batch = f"toolparse batch x{setup.streams}"
    plans: list[tuple[str, str, Callable[[], Session], int, int]] = [
        ("toolparse feed", "", partial(TextSession, response, tokens), BLOCK, setup.repeats),
        (
            "toolparse feed_tokens",
            "",
            partial(TokenSession, response, tokens, vocab),
            BLOCK,
            setup.repeats,
        ),
        (
            batch,
            "",
            partial(BatchSession, response, tokens, vocab, setup.streams),
            BLOCK,
            max(1, setup.repeats // 2),
        ),
    ]
    # The peers cost microseconds and more per token: timed one token at a time, and
    # repeated less on the long responses.
    peer_repeats = 3 if len(tokens) < 5_000 else 1
    if "vLLM" in setup.peers:
        vllm, tool = setup.peers["vLLM"], VLLM_TOOL_PARSER[response.kind]
        for label, cls in (("parser", VllmParserSession), ("server path", VllmServerSession)):
            make = partial(cls, vllm, response, tokens, setup.hf_tokenizer)
            plans.append((f"vLLM {tool} {label}", f"vLLM {label}", make, 1, peer_repeats))
        # toolparse's adapter on the same serving path, through vLLM's plugin, and the
        # floor: what vLLM's own per-chunk work costs around the cheapest tool parser
        make = partial(VllmServerSession, vllm, response, tokens, setup.hf_tokenizer, True)
        plans.append(("toolparse in vLLM server path", "", make, 1, peer_repeats))
        make = partial(VllmServerSession, vllm, response, tokens, setup.hf_tokenizer, floor=True)
        plans.append(("vLLM server path floor", "", make, 1, peer_repeats))
    if "SGLang" in setup.peers:
        make = partial(SglangSession, setup.peers["SGLang"], response, tokens)
        name = f"SGLang {SGLANG_TOOL_PARSER[response.kind]}"
        plans.append((name, "SGLang", make, 1, peer_repeats))
        make = partial(SglangSession, setup.peers["SGLang"], response, tokens, True)
        plans.append(("toolparse in SGLang", "", make, 1, peer_repeats))
    runs = []
    for name, family, make, block, repeats in plans:
        try:
            run = measure(name, family or name, make, tokens, block, repeats)
        except Exception as error:  # a peer that fails on this response
            print(f"| {response.name} | {name} | failed: {type(error).__name__}: {error} |")
            continue
        runs.append(run)
        print(row(response, tokens, run, response.calls), flush=True)
    return runs


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="toolparse only, one repeat each")
    options.add_argument("--plot", metavar="PATH", help="draw the cost per token (matplotlib)")
    options.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    options.add_argument("--streams", type=int, default=64, help="BatchParser streams (64)")
    options.add_argument(
        "--peers",
        default="vllm,sglang",
        help="the peers to run, comma-separated: vllm, sglang, none (default vllm,sglang)",
    )
    options.add_argument(
        "--only", metavar="TEXT", help="only the responses whose name contains TEXT"
    )
    args = options.parse_args()
    quick: bool = args.quick
    repeats = 1 if quick else 7
    streams = min(args.streams, 8) if quick else args.streams

    peers: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    if quick:
        skipped.append("vLLM and SGLang: not run in --quick mode")
    else:
        wanted = {name.strip().lower() for name in args.peers.split(",")}
        for label, importer in (("vLLM", import_vllm), ("SGLang", import_sglang)):
            if label.lower() not in wanted:
                skipped.append(f"{label}: not run (--peers {args.peers})")
                continue
            try:
                peers[label] = importer()
            except Exception as error:  # not installed, or a version this script does not know
                skipped.append(
                    f"{label}: skipped, not importable ({type(error).__name__}: {error})"
                )

    tokenizer = train_tokenizer(training_texts())
    vocab = toolparse.Vocab.from_tokenizer(tokenizer)
    hf_tokenizer: Any = None
    if "vLLM" in peers:
        try:
            from transformers import PreTrainedTokenizerFast

            hf_tokenizer = PreTrainedTokenizerFast(tokenizer_object=tokenizer)
        except Exception as error:
            skipped.append(f"vLLM: skipped, no transformers tokenizer ({error})")
            del peers["vLLM"]

    print(machine_line({k: v["version"] for k, v in peers.items()}))
    print(
        f"byte-level BPE, {len(vocab)} tokens (markers as added tokens); toolparse timed in "
        f"blocks of {BLOCK} tokens, median of {repeats}; batch: {streams} streams in lockstep"
    )
    for line in skipped:
        print(line)
    print()
    print(HEADER)
    print(RULE)

    setup = Setup(repeats, streams, vocab, peers, hf_tokenizer)
    results: list[tuple[Response, Tokens, list[Run]]] = []
    for response in responses():
        if args.only and args.only not in response.name:
            continue
        tokens = tokenize(response, tokenizer, vocab)
        results.append((response, tokens, run_response(response, tokens, setup)))

    print()
    print("Each peer's median cost per token over toolparse feed's (the same tokens):")
    for response, _, runs in results:
        by_name = {run.parser: run for run in runs}
        mine = by_name.get("toolparse feed")
        theirs = [run for run in runs if run.parser.startswith(("vLLM", "SGLang"))]
        if mine and theirs:
            ratios = ", ".join(f"{run.parser} {run.median / mine.median:,.0f}x" for run in theirs)
            print(f"  {response.name}: {ratios}")

    if args.json:
        dump = [
            {
                "response": response.name,
                "tokens": len(tokens),
                "runs": [
                    {
                        "parser": run.parser,
                        "median_ns": run.median,
                        "phase_median_ns": {p: run.phase_median(p) for p in run.phase_costs},
                        "args_end_start": run.args_end_start,
                        "total_s": run.total_s,
                        "end_start": run.end_start,
                        "calls_ok": run.calls == response.calls,
                        "block": run.block,
                        "ns_per_token": run.ns_per_token,
                    }
                    for run in runs
                ],
            }
            for response, tokens, runs in results
        ]
        Path(args.json).write_text(json.dumps(dump))
    if args.plot:
        plot(args.plot, results)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
