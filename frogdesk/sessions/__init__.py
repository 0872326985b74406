"""Sessions: crash-safe transcripts on disk, listing and resume.

A session folder holds `session.json` (the record: repository, worktree, model, settings,
status) and `transcript.jsonl`, one JSON line per event, appended and fsynced as it
happens: the opening messages, each finished step (the parsed assistant message with its
tool calls, the observations, usage, `raw_text`, the reply exactly as generated, and on
the llama backend `raw_tokens`, its sampled token ids),
user follow-ups, and how each run ended. A resume re-reads the record and the transcript
and rebuilds the message list from the parsed steps, each assistant message carrying its
`raw_text` and `raw_tokens` as `Message.raw` / `Message.raw_tokens`. The llama backend
writes those replies back as generation prompt + reply + end of turn instead of
re-rendering them with the chat template (which trims and drops text), so the model
re-reads exactly the tokens it generated; without the ids (another vocabulary) it
tokenizes the raw text, which differs only where the model sampled a split of its text
other than the tokenizer's. Other backends render the parsed messages.
A torn last line (a crash or a full disk mid-write) is dropped and cut off on resume.
"""
