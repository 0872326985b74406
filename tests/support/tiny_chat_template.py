"""The Qwen3.5-style chat template embedded in the tiny test model."""

from __future__ import annotations

TOOL_INSTRUCTIONS = (
    "To use a function, answer with one or more blocks in exactly this form, and nothing"
    " after the last block:\n"
    "<tool_call>\n<function=FUNCTION_NAME>\n<parameter=PARAMETER_NAME>\nVALUE\n</parameter>\n"
    "</function>\n</tool_call>\n"
    "Rules: give every required parameter; a VALUE may span several lines; write nothing"
    " after </tool_call>; answer without a call when no function is needed."
)
"""The calling instructions the template puts in the system turn after the tool list."""

# Jinja source. Whitespace control (`{%-`/`-%}`) keeps the rendered text exactly ChatML.
CHAT_TEMPLATE = (
    """{%- macro render_value(value) -%}
{%- if value is mapping or (value is sequence and value is not string) -%}
{{- value | tojson -}}
{%- else -%}
{{- value | string -}}
{%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(last_query=-1, system_text='', first=0) -%}
{%- if messages and messages[0].role == 'system' -%}
{%- set ns.system_text = (messages[0].content or '') | trim -%}
{%- set ns.first = 1 -%}
{%- endif -%}
{%- for m in messages -%}
{%- if m.role == 'user' and not ((m.content or '') is string and (m.content or '').startswith('<tool_response>')) -%}
{%- set ns.last_query = loop.index0 -%}
{%- endif -%}
{%- endfor -%}
{%- if tools -%}
{{- '<|im_start|>system\\n# Tools\\n\\nYou may call the functions listed in <tools></tools>:\\n<tools>' -}}
{%- for tool in tools -%}
{{- '\\n' -}}{{- tool | tojson -}}
{%- endfor -%}
{{- '\\n</tools>\\n\\n"""
    + TOOL_INSTRUCTIONS.replace("\n", "\\n")
    + """' -}}
{%- if ns.system_text -%}
{{- '\\n\\n' + ns.system_text -}}
{%- endif -%}
{{- '<|im_end|>\\n' -}}
{%- elif ns.first == 1 -%}
{{- '<|im_start|>system\\n' + ns.system_text + '<|im_end|>\\n' -}}
{%- endif -%}
{%- for m in messages[ns.first:] -%}
{%- set i = loop.index0 + ns.first -%}
{%- if m.role == 'user' -%}
{{- '<|im_start|>user\\n' + (m.content or '') + '<|im_end|>\\n' -}}
{%- elif m.role == 'assistant' -%}
{%- set content = (m.content or '') -%}
{%- set reasoning = (m.reasoning_content or '') -%}
{%- if '</think>' in content -%}
{%- set reasoning = content.split('</think>')[0].split('<think>')[-1] -%}
{%- set content = content.split('</think>')[-1] -%}
{%- endif -%}
{%- set content = content | trim -%}
{%- set reasoning = reasoning | trim -%}
{{- '<|im_start|>assistant\\n' -}}
{%- if i > ns.last_query -%}
{{- '<think>\\n' + reasoning + '\\n</think>\\n\\n' -}}
{%- endif -%}
{{- content -}}
{%- for call in (m.tool_calls or []) -%}
{%- set fn = call.function if call.function is defined else call -%}
{%- if loop.first and content -%}{{- '\\n\\n' -}}{%- elif not loop.first -%}{{- '\\n' -}}{%- endif -%}
{{- '<tool_call>\\n<function=' + fn.name + '>\\n' -}}
{%- if fn.arguments is mapping -%}
{%- for key, value in fn.arguments.items() -%}
{{- '<parameter=' + key + '>\\n' -}}{{- render_value(value) -}}{{- '\\n</parameter>\\n' -}}
{%- endfor -%}
{%- endif -%}
{{- '</function>\\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\\n' -}}
{%- elif m.role == 'tool' -%}
{%- if loop.first or messages[i - 1].role != 'tool' -%}
{{- '<|im_start|>user' -}}
{%- endif -%}
{{- '\\n<tool_response>\\n' + (m.content or '') + '\\n</tool_response>' -}}
{%- if loop.last or messages[i + 1].role != 'tool' -%}
{{- '<|im_end|>\\n' -}}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\\n' -}}
{%- if enable_thinking is defined and enable_thinking is false -%}
{{- '<think>\\n\\n</think>\\n\\n' -}}
{%- else -%}
{{- '<think>\\n' -}}
{%- endif -%}
{%- endif -%}"""
)
"""Jinja chat template: tools block, think handling, tool results in a user turn."""
