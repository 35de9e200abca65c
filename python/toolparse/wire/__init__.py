"""The wire shapes applications read: OpenAI chat completions (toolparse.wire.openai) and
Anthropic Messages (toolparse.wire.anthropic), whole messages and streamed chunks."""
