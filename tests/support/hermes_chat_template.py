"""A ChatML template in the Hermes form Qwen2.5's template teaches (written for FrogDesk's tests).

Facts of the format: with tools, the system turn lists each tool's JSON on its own line
inside `<tools></tools>` and asks for `<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>`;
an assistant's calls follow its content, each on a new line, arguments written with `tojson`;
tool results go in a user turn as `<tool_response>\\n...\\n</tool_response>`, consecutive ones
sharing the turn; the generation prompt is `<|im_start|>assistant\\n` (no reasoning block).
"""

from __future__ import annotations

HERMES_CHAT_TEMPLATE = """{%- if tools -%}
{{- '<|im_start|>system\\n' -}}
{%- if messages[0].role == 'system' -%}
{{- messages[0].content -}}
{%- else -%}
{{- 'You are a helpful assistant.' -}}
{%- endif -%}
{{- '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' -}}
{%- for tool in tools -%}
{{- '\\n' -}}{{- tool | tojson -}}
{%- endfor -%}
{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n' -}}
{%- elif messages[0].role == 'system' -%}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' -}}
{%- endif -%}
{%- for message in messages -%}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) -%}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}
{%- elif message.role == 'assistant' -%}
{{- '<|im_start|>assistant' -}}
{%- if message.content -%}
{{- '\\n' + message.content -}}
{%- endif -%}
{%- for tool_call in message.tool_calls or [] -%}
{%- if tool_call.function is defined -%}
{%- set tool_call = tool_call.function -%}
{%- endif -%}
{{- '\\n<tool_call>\\n{"name": "' + tool_call.name + '", "arguments": ' -}}
{{- tool_call.arguments | tojson -}}
{{- '}\\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\\n' -}}
{%- elif message.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}
{{- '<|im_start|>user' -}}
{%- endif -%}
{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' -}}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}
{{- '<|im_end|>\\n' -}}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\\n' -}}
{%- endif -%}
"""
"""Jinja source; whitespace control keeps the rendered text exactly ChatML."""
