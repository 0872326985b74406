"""Sessions: crash-safe transcripts on disk, listing and resume.

A session folder holds `session.json` (the record: repository, worktree, model, settings,
status) and `transcript.jsonl`, one JSON line per event, appended and fsynced as it
happens: the opening messages, each finished step (the parsed assistant message with its
tool calls, the observations, usage, and `raw_text`, the reply exactly as generated),
user follow-ups, and how each run ended. A resume re-reads the record and the transcript
and rebuilds the message list from the parsed steps, each assistant message carrying its
`raw_text` as `Message.raw`. The llama backend writes those replies back as generation
prompt + raw text + end of turn instead of re-rendering them with the chat template (which
trims and drops text), so the model re-reads its own words: the same tokens wherever its
sampled tokens were the tokenizer's own split of that text, as a trained model's nearly
always are. Other backends render the parsed messages.
A torn last line (a crash or a full disk mid-write) is dropped and cut off on resume.
"""
