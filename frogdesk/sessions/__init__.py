"""Sessions: crash-safe transcripts on disk, listing and resume.

A session folder holds `session.json` (the record: repository, worktree, model, settings,
status) and `transcript.jsonl`, one JSON line per event, appended and fsynced as it
happens: the opening messages, each finished step (the parsed assistant message with its
tool calls, the observations, usage, and `raw_text`, the reply exactly as generated),
user follow-ups, and how each run ended. A resume re-reads the record and the transcript
and rebuilds the message list from the parsed steps; a backend renders that list with
the chat template, which trims and drops text, so the llama backend re-evaluates tokens
that differ slightly from the ones it sampled (`raw_text` keeps the originals on disk).
A torn last line (a crash or a full disk mid-write) is dropped and cut off on resume.
"""
