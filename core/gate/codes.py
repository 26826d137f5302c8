"""Every anomaly the engine can report, declared once: its scope, its effect, and one sentence.

The accumulator routes an anomaly by the effect declared here, never by how it was raised: a
``disputes`` code refuses the call it names, an ``unreadable`` code refuses every call of the
turn, a ``harmless`` code is a documented shape of a real provider and changes nothing, an
``info`` code is said for the reader while the gate decides through other evidence (the terminal
signal, a stop reason) that a rule in :mod:`.rules` reads. The README's gate section is this
table, generated (``scripts/gate_tables.py``; a test keeps the two equal).
"""

from __future__ import annotations

from enum import StrEnum


class Scope(StrEnum):
    CALL = "call"
    """About one call; raised with that call's key."""
    TURN = "turn"
    """About the stream as a whole (a key, when given, only says where it was seen)."""


class Effect(StrEnum):
    DISPUTES = "disputes"
    """The gate refuses the call it names (rule ``disputed``)."""
    UNREADABLE = "unreadable"
    """A frame, or part of one, could not be read: the gate refuses every call (rule
    ``unreadable``). What it carried might have belonged to any call."""
    HARMLESS = "harmless"
    """A documented shape of a real provider or gateway: shown, no effect on any decision."""
    INFO = "info"
    """Shown; the gate decides through the evidence a rule reads (terminal, stop reason, limit)."""


C, T = Scope.CALL, Scope.TURN
D, U, H, N = Effect.DISPUTES, Effect.UNREADABLE, Effect.HARMLESS, Effect.INFO


class Code(StrEnum):
    """An anomaly code: the member's value is the code as records and exports spell it."""

    scope: Scope
    effect: Effect
    sentence: str

    def __new__(cls, value: str, scope: Scope, effect: Effect, sentence: str) -> Code:
        member = str.__new__(cls, value)
        member._value_ = value
        member.scope = scope
        member.effect = effect
        member.sentence = sentence
        return member

    # -- frames the engine or the SDK cannot read (every call refused) -----------------------
    NOT_JSON = ("not_json", T, U, "A frame's data is not JSON.")
    NOT_AN_OBJECT = ("not_an_object", T, U, "A frame's JSON is not an object.")
    EVENT_NAME_MISSING = ("event_name_missing", T, U,
                          "A frame has no event: line where the protocol needs one; the SDK skips it.")
    EVENT_NAME_MISMATCH = ("event_name_mismatch", T, U,
                           "A frame's event: line names another type than its data; the SDK reads it "
                           "otherwise.")
    EVENT_BEFORE_START = ("event_before_start", T, U,
                          "An event came before the message or interaction it belongs to had started.")
    SEQUENCE_GAP = ("sequence_gap", T, U, "A sequence number skipped, repeated, missing from a "
                    "numbered stream, or appearing in an unnumbered one: an event was lost.")
    RESPONSE_ID_CHANGED = ("response_id_changed", T, U,
                           "The response id changed mid-stream: two responses are spliced together.")
    BAD_INDEX = ("bad_index", T, U, "An event's index is missing or not an integer.")
    MISSING_CHOICE_INDEX = ("missing_choice_index", T, U, "A choice has no integer index; the SDK "
                            "cannot place it.")
    BAD_CHOICES = ("bad_choices", T, U, "A chunk's choices is not a list.")
    BAD_CHOICE = ("bad_choice", T, U, "A choice is not an object.")
    BAD_CANDIDATES = ("bad_candidates", T, U, "A response's candidates is not a list.")
    BAD_CANDIDATE = ("bad_candidate", T, U, "A candidate is not an object, or its index is not an "
                     "integer.")
    BAD_PART = ("bad_part", T, U, "A content or part is not of the documented type.")
    BAD_FUNCTION_CALL = ("bad_function_call", T, U, "A function call (Gemini's functionCall, "
                         "Chat's legacy function_call) is not an object.")
    BAD_TOOL_CALLS = ("bad_tool_calls", T, U, "A delta's tool_calls is not a list.")
    BAD_TOOL_CALL = ("bad_tool_call", T, U, "A tool_calls entry is not an object, or its index is "
                     "not an integer.")
    BAD_DELTA = ("bad_delta", T, U, "A delta is not of the documented shape (no type, or a fragment "
                 "that is not a string).")
    BAD_TEXT = ("bad_text", T, U, "Assistant text that is not a string: the frame is not what the "
                "protocol says.")
    BAD_ITEM = ("bad_item", T, U, "An output item event without an item object.")
    BAD_MESSAGE = ("bad_message", T, U, "A message_start without its message object.")
    BAD_BLOCK = ("bad_block", T, U, "A content_block_start without a content block object.")
    BAD_STEP = ("bad_step", T, U, "A step start without its step object.")
    BAD_RESPONSE = ("bad_response", T, U, "A terminal event without its response object.")
    FRAME_CHECKSUM = ("frame_checksum", T, U, "A binary event-stream frame's prelude or message "
                      "CRC32 does not match its bytes: the frame is corrupt.")
    FRAME_LENGTH = ("frame_length", T, U, "A binary event-stream frame declares a length no frame "
                    "can have: framing stopped there.")
    FRAME_HEADERS = ("frame_headers", T, U, "A binary event-stream frame's headers are malformed "
                     "(cut short, of an unknown type, repeated or not UTF-8).")

    # -- what the stream says against one call (that call refused) -------------------------
    DELTA_FOR_UNKNOWN_CALL = ("delta_for_unknown_call", C, D,
                              "Arguments for a call that was never opened.")
    DELTA_WITHOUT_START = ("delta_without_start", C, D, "A delta for a block that never started.")
    STOP_WITHOUT_START = ("stop_without_start", C, D, "A stop for a block or step that is not open.")
    CALL_NOT_ANNOUNCED = ("call_not_announced", C, D,
                          "A call's done event names an item that was never added.")
    DELTA_AFTER_CLOSE = ("delta_after_close", C, D, "Arguments arrived after the call was closed.")
    CLOSED_TWICE = ("closed_twice", C, D, "The call was closed twice.")
    IDENTITY_CHANGED = ("identity_changed", C, D, "The call's function name or id changed: which tool "
                        "it meant is unknown.")
    FINAL_COPY_MISMATCH = ("final_copy_mismatch", C, D,
                           "The provider's final copy of the arguments differs from the fragments.")
    FINAL_ARGUMENTS_DIFFER = ("final_arguments_differ", C, D,
                              "Two final copies of the arguments differ.")
    ARGUMENTS_REPLACED = ("arguments_replaced", C, D,
                          "A whole argument object replaced a different one.")
    MIXED_ARGUMENT_FORMS = ("mixed_argument_forms", C, D,
                            "Text fragments and whole argument objects mixed in one call.")
    EMPTY_OBJECT_THEN_MORE = ("empty_object_then_more", C, D, "The call sent {} and then more text.")
    START_INPUT_THEN_DELTAS = ("start_input_then_deltas", C, D,
                               "A block's start input and its deltas both carry arguments.")
    START_ARGUMENTS_THEN_DELTAS = ("start_arguments_then_deltas", C, D,
                                   "A step's start arguments and its deltas both carry arguments.")
    ARGUMENTS_NOT_TEXT = ("arguments_not_text", C, D, "An arguments delta carries an object, not text.")
    BAD_ARGUMENTS = ("bad_arguments", C, D, "A call's arguments are of the wrong type.")
    ARGS_NOT_OBJECT = ("args_not_object", C, D, "A functionCall's args is not an object.")
    UNSERIALIZABLE_ARGUMENTS = ("unserializable_arguments", C, D,
                                "An argument object could not be written as JSON.")
    BLOCK_RESTARTED = ("block_restarted", C, D, "A block started again before its stop.")
    STEP_RESTARTED = ("step_restarted", C, D, "A step started again before its stop.")
    BLOCK_NOT_STOPPED = ("block_not_stopped", C, D, "The stream ended before the block's stop.")
    STEP_NOT_STOPPED = ("step_not_stopped", C, D, "The stream ended before the step's stop.")
    CALL_NOT_ENDED = ("call_not_ended", C, D, "A streamed call's last piece said more would follow.")
    STRING_NOT_ENDED = ("string_not_ended", C, D, "A streamed string argument never ended.")
    CALL_INCOMPLETE = ("call_incomplete", C, D, "The provider marked the call incomplete.")
    CALL_NOT_DONE = ("call_not_done", C, D, "A call got no done event before the turn's end.")
    CALL_MISSING_FROM_FINAL_RESPONSE = ("call_missing_from_final_response", C, D,
                                        "A streamed call is missing from the final response.")
    CALL_AFTER_FINISH = ("call_after_finish", C, D,
                         "A call's data came after its choice or candidate had finished.")
    CALL_AFTER_TERMINAL = ("call_after_terminal", C, D,
                           "A call's data came after the terminal signal: not part of the turn.")
    CALL_WITHOUT_NAME = ("call_without_name", C, D, "A call first appears without a function name.")
    AMBIGUOUS_FRAGMENT = ("ambiguous_fragment", C, D,
                          "A fragment with neither index nor id while several calls are open.")
    ROUTING_DISAGREES = ("routing_disagrees", C, D, "An event's item id and output index name "
                         "different calls.")
    OUTPUT_INDEX_REUSED = ("output_index_reused", C, D, "An output index was reused by another item.")
    DUPLICATE_ITEM = ("duplicate_item", C, D, "An output item was added twice.")
    UNKNOWN_DELTA = ("unknown_delta", C, D, "A delta type this protocol does not document.")
    UNHANDLED_ITEM = ("unhandled_item", C, D, "An output item type that is not read as a call.")
    PIECE_FOR_UNKNOWN_CALL = ("piece_for_unknown_call", C, D, "partialArgs with no call open.")
    AMBIGUOUS_PIECE = ("ambiguous_piece", C, D, "A partialArgs piece carries more than one value.")
    BAD_PARTIAL_ARGS = ("bad_partial_args", C, D, "partialArgs is not a list.")
    BAD_PIECE = ("bad_piece", C, D, "A partialArgs piece without a jsonPath or a value.")
    BAD_PIECE_VALUE = ("bad_piece_value", C, D, "A partialArgs value of the wrong type.")
    STRING_REOPENED = ("string_reopened", C, D, "More of a streamed string after a piece that "
                       "said it was done.")
    VALUE_REPLACED = ("value_replaced", C, D, "A partialArgs piece replaced an earlier value.")
    BAD_JSON_PATH = ("bad_json_path", C, D, "A partialArgs jsonPath that cannot be placed.")

    # -- documented shapes of real providers (no effect) ---------------------------------------
    REPEATED_IDENTITY = ("repeated_identity", C, H,
                         "Gateways repeat a call's id and name on every chunk (never concatenated).")
    MISSING_INDEX = ("missing_index", C, H,
                     "Gateways that send no tool_calls index: routed by id, reported once.")
    INDEX_REUSED = ("index_reused", C, H,
                    "Ollama gives every call index 0: a new id after arguments is a new call.")
    ITEM_ID_CHANGED = ("item_id_changed", C, H,
                       "GitHub Copilot's proxy rotates item ids: routed by output index.")
    MISSING_CALL_TERMINATOR = ("missing_call_terminator", C, H,
                               "Vertex ends a whole call without the empty functionCall part.")
    NO_ARGUMENTS = ("no_arguments", C, H, "An Interactions call without arguments on the wire.")
    MISSING_SEQUENCE_NUMBER = ("missing_sequence_number", T, H,
                               "A stream with no sequence numbers from its first event (the API "
                               "reference's example has none): the order is not checked.")
    ARGUMENTS_ONLY_IN_FINAL_COPY = ("arguments_only_in_final_copy", C, H,
                                    "The arguments came only in the provider's final copy, with no "
                                    "fragments: some OpenAI-compatible servers stream calls so.")

    # -- said for the reader; the gate decides through other evidence --------------------------
    MISSING_TERMINAL = ("missing_terminal", T, N, "The stream ended without its terminal signal.")
    LIMIT_EXCEEDED = ("limit_exceeded", T, N, "The engine stopped reading at a limit.")
    UNKNOWN_STOP_REASON = ("unknown_stop_reason", T, N,
                           "A stop reason this protocol does not document: counted as a failure.")
    BAD_STOP_REASON = ("bad_stop_reason", T, N, "A stop reason that is not a string: counted as a "
                       "failure.")
    MISSING_STOP_REASON = ("missing_stop_reason", T, N, "The turn ended without a stop reason: "
                           "counted as a failure.")
    UNKNOWN_FINISH_REASON = ("unknown_finish_reason", T, N,
                             "A finish reason this protocol does not document: counted as a failure.")
    BAD_FINISH_REASON = ("bad_finish_reason", T, N, "A finish reason that is not a string: counted "
                         "as a failure.")
    UNKNOWN_STATUS = ("unknown_status", T, N,
                      "A status this protocol does not document: counted as a failure.")
    MISSING_STATUS = ("missing_status", T, N, "A terminal event without a status: counted as a "
                      "failure.")
    UNKNOWN_INCOMPLETE_REASON = ("unknown_incomplete_reason", T, N,
                                 "An incomplete response with an undocumented reason.")
    STATUS_MISMATCH = ("status_mismatch", T, N, "A response's status disagrees with its event.")
    DONE_WITHOUT_FINISH_REASON = ("done_without_finish_reason", T, N,
                                  "[DONE] came but no choice reported a finish reason.")
    CHOICE_WITHOUT_FINISH_REASON = ("choice_without_finish_reason", T, N,
                                    "A choice had no finish reason at [DONE].")
    DONE_BEFORE_COMPLETED = ("done_before_completed", T, N,
                             "[DONE] came before the terminal interaction.completed.")
    DATA_AFTER_DONE = ("data_after_done", T, N, "Data after [DONE]: the SDKs stop reading there; "
                       "so does the engine.")
    DATA_AFTER_TERMINAL = ("data_after_terminal", T, N,
                           "An event after the terminal signal: not part of the turn.")
    REPEATED_TERMINAL = ("repeated_terminal", T, N, "A second terminal signal (the first counts).")
    REPEATED_DONE = ("repeated_done", T, N, "A second [DONE].")
    REPEATED_FINISH_REASON = ("repeated_finish_reason", T, N, "A choice finished twice (the first "
                              "cut or failure counts).")
    DELTA_AFTER_FINISH = ("delta_after_finish", T, N, "A choice sent more after its finish reason "
                          "(a call there is cut).")
    DONE_WITH_MORE = ("done_with_more", T, N, "Data that starts with [DONE] and has more: read as "
                      "[DONE], as the SDKs do.")
    UNEXPECTED_DONE = ("unexpected_done", T, N, "[DONE] in a protocol that has none.")
    MISSING_DONE = ("missing_done", T, N, "The stream ended after its terminal event without [DONE].")
    DUPLICATE_MESSAGE_START = ("duplicate_message_start", T, N,
                               "message_start repeated for the same message.")
    SPLICED_MESSAGE_START = ("spliced_message_start", T, N,
                             "A new message started before the last one ended: the old one's calls "
                             "are cut.")
    INTERACTION_RESTARTED = ("interaction_restarted", T, N,
                             "A new interaction started before the last one ended: the old one's "
                             "calls are cut.")
    UNEXPECTED_OBJECT = ("unexpected_object", T, N, "A chunk whose object is not a chunk's.")
    UNKNOWN_EVENT = ("unknown_event", T, N,
                     "An event type this protocol does not document: kept and shown, as the docs ask.")
    UNHANDLED_PART = ("unhandled_part", T, N, "A part kind that is not shown.")
    CALL_ONLY_IN_FINAL_RESPONSE = ("call_only_in_final_response", T, N,
                                   "The final response lists a call that was never streamed: not run.")
    TERMINATOR_WITHOUT_CALL = ("terminator_without_call", T, N,
                               "An empty functionCall part with no streamed call open.")
    BAD_USAGE = ("bad_usage", T, N, "Usage that is not an object.")
    BUDGET_SPENT_AFTER_DECISION = (
        "budget_spent_after_decision", T, N,
        "Usage reported after the terminal signal reaches the request's output-token limit: the "
        "calls were decided before it came (Bedrock Converse), and the output may have been cut.")
    TEXT_CAPPED = ("text_capped", T, N, "Assistant text past the limit: counted, not kept.")
    ANOMALIES_CAPPED = ("anomalies_capped", T, N, "More anomalies of one code than the limit: counted, "
                        "not kept (disputes still reach their calls).")
    PROTOCOL_UNKNOWN = ("protocol_unknown", T, N, "No protocol recognised in the first frames.")


del C, T, D, U, H, N
