"""The OpenAI Responses vocabulary :mod:`.openai_responses` sorts events and items by: which
deltas carry assistant text, which output items are not client calls, and which events carry
nothing the turn's verdict needs (PROTOCOLS.md §1). Its stop reasons (which incomplete reasons
are failures) are in its spec, :mod:`.specs.openai_responses`."""

# Which delta events carry assistant text, and on which channel.
TEXT_EVENTS: dict[str, str] = {
    "response.output_text.delta": "text",
    "response.refusal.delta": "refusal",
    "response.reasoning_summary_text.delta": "reasoning",
    "response.reasoning_text.delta": "reasoning",
}

# Output items that are not client calls: text, reasoning, and tools the server runs itself.
# Any other item type (custom_tool_call, computer_call, …) is reported, not silently skipped.
NOT_CALLS = frozenset({
    "message", "reasoning", "web_search_call", "file_search_call", "code_interpreter_call",
    "image_generation_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
    "tool_search_call", "compaction",
})

# Events that carry nothing a call or the turn's verdict needs (their facts come again in the
# item/response objects we do read). Listed so that they are not reported as unknown.
QUIET_EVENTS = frozenset({
    "response.created", "response.in_progress", "response.queued",
    "response.content_part.added", "response.content_part.done",
    "response.output_text.done", "response.output_text.annotation.added",
    "response.refusal.done", "response.reasoning_text.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
    "response.web_search_call.in_progress", "response.web_search_call.searching",
    "response.web_search_call.completed",
    "response.file_search_call.in_progress", "response.file_search_call.searching",
    "response.file_search_call.completed",
    "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
    "response.code_interpreter_call.completed", "response.code_interpreter_call_code.delta",
    "response.code_interpreter_call_code.done",
    "response.image_generation_call.in_progress", "response.image_generation_call.generating",
    "response.image_generation_call.partial_image", "response.image_generation_call.completed",
    "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed",
    "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
    "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
})
