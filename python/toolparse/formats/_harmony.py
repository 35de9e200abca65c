"""The harmony message grammar, shared by gpt_oss and the dialects that render it with
other spacing (llmjp_harmony): see gpt_oss for the facts and choices it encodes."""

from __future__ import annotations

from ..grammar import (
    Node,
    ahead,
    choice,
    cut,
    eof,
    json,
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

START, END, MESSAGE = "<|start|>", "<|end|>", "<|message|>"
CHANNEL, CONSTRAIN = "<|channel|>", "<|constrain|>"
CALL, RETURN = "<|call|>", "<|return|>"
MARKERS = (START, END, MESSAGE, CHANNEL, CONSTRAIN, CALL, RETURN)

# A message's text runs to its end token, or to the next message when that token is missing.
_TEXT_STOPS = (END, RETURN, CALL, START, CHANNEL)
_NAME_STOPS = (" ", CONSTRAIN, MESSAGE, CHANNEL)


def _name() -> Node:
    return tag("tool_name", until(*_NAME_STOPS, need_stop=True))


def harmony_rules(space: str = "") -> dict[str, Node]:
    """The rules of a harmony output.  space: text a dialect's rendering puts after each
    special token ("" for gpt-oss itself); it is optional and never part of a name, an
    argument or a text, and an output continuing a prompt that ended with a special token
    may begin with it."""

    def tok(marker: str) -> Node:
        return seq(lit(marker), opt(lit(space))) if space else lit(marker)

    lead = [opt(lit(space))] if space else []
    return {
        # the role-header call begins with a space: it is not leading whitespace
        "start": seq(choice(ahead(lit(" to=")), ws()), ref("body")),
        "start_in_reasoning": seq(*lead, ref("analysis_text"), ws(), ref("body")),
        "body": seq(many(choice(ref("message"), ref("stray"))), eof()),
        "message": seq(
            choice(
                seq(
                    tok(START),
                    cut(),
                    # the role, or no role before a channel: the assistant's message
                    recover(
                        seq(choice(lit("assistant"), ahead(lit(CHANNEL))), ref("header")),
                        until(START),
                    ),
                ),
                ref("header"),
            ),
            ws(),
        ),
        "header": choice(ref("role_call"), ref("channel_message")),
        # to=functions.NAME<|channel|>commentary json<|message|>{...}
        "role_call": seq(
            lit(" to="),
            cut(),
            recover(
                tag("tool_call", seq(ref("recipient"), ref("skip_header"), ref("arguments"))),
                until(START),
            ),
        ),
        "channel_message": seq(tok(CHANNEL), cut(), recover(ref("channel"), until(START, CHANNEL))),
        "channel": choice(
            seq(
                lit("analysis"),
                cut(),
                choice(ref("channel_call"), seq(ref("skip_header"), ref("analysis_text"))),
            ),
            seq(
                lit("commentary"),
                cut(),
                choice(
                    # a stray <|channel|>commentary before the real channel
                    seq(opt(lit(" to=assistant")), ahead(lit(CHANNEL))),
                    ref("channel_call"),
                    seq(ref("skip_header"), ref("content_text")),
                ),
            ),
            seq(
                lit("final"),
                cut(),
                choice(ref("channel_call"), seq(ref("skip_header"), ref("content_text"))),
            ),
        ),
        # <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
        "channel_call": seq(
            ws(),
            lit("to="),
            cut(),
            recover(
                tag("tool_call", seq(ref("recipient"), ref("skip_header"), ref("arguments"))),
                until(START),
            ),
        ),
        "recipient": choice(seq(lit("functions."), _name()), _name()),
        # the rest of a header (content type, channel) up to and including <|message|>
        "skip_header": seq(until(MESSAGE, need_stop=True), tok(MESSAGE), cut()),
        "arguments": seq(
            ws(),
            tag("tool_args", json("strict", "object")),
            until(*_TEXT_STOPS),
            ref("text_end"),
        ),
        "analysis_text": seq(tag("reasoning", until(*_TEXT_STOPS)), ref("text_end")),
        "content_text": seq(tag("content", until(*_TEXT_STOPS)), ref("text_end")),
        "text_end": opt(choice(tok(END), tok(RETURN), tok(CALL))),
        # outside any message: text is content, a lone marker is dropped
        "stray": choice(
            tag("content", until(*MARKERS, min1=True, commit=True)),
            tok(END),
            tok(RETURN),
            tok(CALL),
            tok(MESSAGE),
            tok(CONSTRAIN),
        ),
    }
