"""The streaming JSON prefix checker agrees with the strict parser, whatever the fragmenting."""

from __future__ import annotations

import json

import orjson
import pytest
from callscope.core.jsonprefix import MAX_DEPTH, NOT_READ, Draft, JsonPrefixChecker, draft_status
from hypothesis import given, settings
from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)


def strict_parses(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def fed(text: str, cuts: list[int]) -> JsonPrefixChecker:
    checker = JsonPrefixChecker()
    previous = 0
    for cut in sorted(set(c % (len(text) + 1) for c in cuts)) + [len(text)]:
        checker.feed(text[previous:cut])
        previous = cut
    return checker


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from([None, 0, 2]), st.lists(st.integers(0, 10**6), max_size=8))
def test_every_prefix_of_valid_json_is_a_valid_prefix(value, indent, cuts):
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    checker = fed(text, cuts)
    assert checker.status is Draft.COMPLETE
    for end in range(len(text)):
        status = draft_status(text[:end])
        assert status is not Draft.INVALID, (text[:end], status)
        assert (status is Draft.COMPLETE) == strict_parses(text[:end])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]:," \\ntrufalsn0123456789.eE+-abc\x01', max_size=30),
       st.lists(st.integers(0, 100), max_size=5))
def test_status_matches_the_strict_parser_and_is_chunking_independent(text, cuts):
    status = draft_status(text)
    assert fed(text, cuts).status is status
    assert (status is Draft.COMPLETE) == strict_parses(text)
    if status is Draft.INVALID:  # invalid is final: nothing appended can repair it
        for tail in ("}", "]", '"', "0", " ", '"}', "]}"):
            assert draft_status(text + tail) is Draft.INVALID


def test_statuses_along_a_real_argument_stream():
    seen = [JsonPrefixChecker().status]
    checker = JsonPrefixChecker()
    for fragment in ["", " ", '{"key"', ': "Obj', 'ective"', "}", " ", "x"]:
        seen.append(checker.feed(fragment))
    assert [s.value for s in seen] == ["empty", "empty", "empty", "incomplete", "incomplete",
                                       "incomplete", "complete", "complete", "invalid"]
    assert checker.error is not None and checker.error.offset == len(' {"key": "Objective"} ')


def test_errors_name_the_offset():
    checker = JsonPrefixChecker()
    checker.feed('{"a": 1,')
    checker.feed(" }")
    assert checker.status is Draft.INVALID
    assert checker.error.offset == 9


def test_nesting_limit_is_enforced():
    assert draft_status("[" * MAX_DEPTH) is Draft.INCOMPLETE
    assert draft_status("[" * (MAX_DEPTH + 1)) is Draft.INVALID


def test_fragment_cost_is_proportional_to_the_fragment():
    # One long string fed one character at a time: the checker keeps no buffer to rescan.
    checker = JsonPrefixChecker()
    checker.feed('{"k": "')
    for _ in range(100_000):
        checker.feed("x")
    assert checker.feed('"}') is Draft.COMPLETE
    assert not hasattr(checker, "_text") and checker.depth == 0


@pytest.mark.parametrize("text, status", [
    ('{"":1E310}', Draft.INVALID),  # (hypothesis found it: orjson refuses infinity)
    ('{"a": -1e400}', Draft.INVALID),
    ("[1" + "0" * 400 + "]", Draft.INVALID),
    ("1E310", Draft.INCOMPLETE),  # a bare number not ended yet: an exponent may still come
    ("1" + "0" * 400 + "e-200", Draft.COMPLETE),
    ('{"a": 1e308}', Draft.COMPLETE),
    ('{"a": 1e-400}', Draft.COMPLETE),  # (underflow is zero, not an error)
    ('{"a": 18446744073709551616}', Draft.COMPLETE),
])
def test_a_number_beyond_a_double_is_what_the_strict_parser_says(text, status):
    assert draft_status(text) is status
    assert (status is Draft.COMPLETE) == strict_parses(text)
    for cuts in ([], [3], [1, 2, 5, 8]):
        assert fed(text, cuts).status is status


_PIECES = ["\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\u0041", "\\n", "\\\\", "a", "é", '"']


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8), st.lists(st.integers(0, 60), max_size=5))
def test_surrogate_escapes_are_judged_as_the_strict_parser_judges_them(pieces, cuts):
    """orjson refuses a lone surrogate escape (high without low, low without high, high then
    anything else): the draft agrees, whatever the chunking."""
    text = '{"k": "' + "".join(pieces) + '"}'
    status = draft_status(text)
    assert (status is Draft.COMPLETE) == strict_parses(text), text
    assert fed(text, cuts).status is status


def test_raw_surrogate_code_points_are_invalid():
    # (a str can hold them; orjson cannot encode them to UTF-8, paired or not)
    for text in ('"\ud800"', '"\ud83d\ude00"', '{"a": "x\udfff"}'):
        assert draft_status(text) is Draft.INVALID
        assert not strict_parses(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='{}[]:," \\ntrufalsn0123456789.eE+-abcdu\x01', max_size=30),
       st.lists(st.integers(0, 40), max_size=6))
def test_the_error_offset_does_not_depend_on_the_chunking(text, cuts):
    whole = JsonPrefixChecker()
    whole.feed(text)
    chunked = fed(text, cuts)
    assert (chunked.error is None) == (whole.error is None)
    if whole.error is not None:
        assert chunked.error.offset == whole.error.offset, (text, cuts)


def test_a_malformed_number_or_literal_is_reported_where_it_starts():
    for text, offset in (('{"a": 01}', 6), ('[tru e]', 1), ('[1, nul]', 4)):
        for cuts in ([], list(range(1, len(text)))):  # whole, and one character at a time
            assert fed(text, cuts).error.offset == offset, (text, cuts)


# -- read_whole: the shortcut for a whole argument text, held equal to feed --------------------

def _behaviour(checker: JsonPrefixChecker, then: list[str]) -> list[object]:
    """What a checker says now and after each later fragment: the state that matters to the
    panes and the gate (status, error, deepest nesting, what is open and where it is)."""
    seen: list[object] = []
    for piece in ["", *then]:
        checker.feed(piece)
        seen.append((checker.status, checker.error, checker.max_depth, checker.depth,
                     checker._offset, checker._expect, checker._token, checker._escape))
    return seen


def _mutations(text: str) -> st.SearchStrategy[str]:
    n = len(text)
    return st.one_of(
        st.just(text), st.just(f" \n{text}\t "),
        st.integers(0, n).map(lambda i: text[:i]),                          # cut short
        st.tuples(st.integers(0, n), st.sampled_from(list('{}[]:,"\\ x1e-\x01\ud800')))
        .map(lambda t: text[:t[0]] + t[1] + text[t[0]:]),                    # one character more
        st.just(text + text), st.just(text + "x"))


WHOLE_TEXTS = st.one_of(
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
    json_values.map(lambda v: json.dumps(v)),                                # \u escapes
    st.sampled_from(["[1e309]", '["\\ud800"]', '["\\ud800\\udc00"]', "[1" + "0" * 400 + "]",
                     "[" * MAX_DEPTH + "]" * MAX_DEPTH, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
                     "{}", "[]", "3", '"x"', "null", "[01]", "[-]", '{"a":1,}', "", "  "]),
).flatmap(_mutations)


@settings(max_examples=400, deadline=None)
@given(WHOLE_TEXTS, st.lists(st.sampled_from(["", " ", "}", "]", ",", '"a"', "1", "x"]), max_size=3))
def test_read_whole_leaves_what_feed_leaves(text, then):
    whole, walked = JsonPrefixChecker(), JsonPrefixChecker()
    assert whole.read_whole(text)[0] is walked.feed(text)
    assert _behaviour(whole, then) == _behaviour(walked, then)


def _serialized(value: object) -> tuple[str, object] | None:
    try:
        return orjson.dumps(value).decode(), orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError:  # (an integer past 64 bits: no orjson text to hand over)
        return None


@settings(max_examples=300, deadline=None)
@given(json_values.map(_serialized).filter(lambda t: t is not None),
       st.lists(st.sampled_from(["", " ", "}", "]", ",", '"a"', "1", "x"]), max_size=3))
def test_read_whole_of_a_serialization_with_its_value_leaves_what_parsing_it_leaves(pair, then):
    """A reader that made the text by serializing a value hands the value over
    (:attr:`.ArgumentsSet.parsed`): taken for the parse, it leaves what parsing would."""
    text, value = pair
    if type(value) is not dict and type(value) is not list:
        value = None  # (only an object or array is handed over)
    given_, parsed = JsonPrefixChecker(), JsonPrefixChecker()
    draft, got = given_.read_whole(text, value)
    assert (draft, got) == parsed.read_whole(text)
    assert got is NOT_READ or value is None or got is value
    assert _behaviour(given_, then) == _behaviour(parsed, then)


def test_read_whole_on_a_checker_that_has_text_already_walks_it():
    whole, walked = JsonPrefixChecker(), JsonPrefixChecker()
    whole.feed("  ")
    walked.feed("  ")
    assert whole.read_whole('{"a": [1]}')[0] is walked.feed('{"a": [1]}') is Draft.COMPLETE
    assert _behaviour(whole, ["x"]) == _behaviour(walked, ["x"])
