"""Structured output: tolerant JSON extraction, and parse failures as first-class results."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from knowgap.models.structured import ParseFailure, extract_json, parse_as


class Citation(BaseModel):
    doc: str
    page: int


class Answer(BaseModel):
    answer: str
    confidence: float
    citation: Citation | None = None


def test_plain_json() -> None:
    assert extract_json('{"answer": "20:00", "confidence": 0.9}') == {"answer": "20:00", "confidence": 0.9}


def test_plain_json_with_surrounding_whitespace() -> None:
    assert extract_json('\n\n  {"a": [1, 2, {"b": null}]}  \n') == {"a": [1, 2, {"b": None}]}


@pytest.mark.parametrize("fence", ["```json", "```JSON", "```"])
def test_fenced_block(fence: str) -> None:
    text = f'Here is the result:\n{fence}\n{{"answer": "30", "confidence": 1}}\n```\nAnything else?'
    assert extract_json(text) == {"answer": "30", "confidence": 1}


def test_embedded_in_english_prose() -> None:
    text = 'Sure! Based on the context, my answer is {"answer": "45 euros", "confidence": 0.8}. Thanks!'
    assert extract_json(text) == {"answer": "45 euros", "confidence": 0.8}


def test_embedded_in_chinese_prose() -> None:
    text = '好的，以下是答案：{"答案": "七个工作日", "依据": "合同第3条"}。希望对你有帮助！'
    assert extract_json(text) == {"答案": "七个工作日", "依据": "合同第3条"}


def test_prose_with_placeholder_braces_before_the_object() -> None:
    text = 'I will use the format {answer}: {"answer": "160"}'
    assert extract_json(text) == {"answer": "160"}


def test_trailing_commas_are_tolerated() -> None:
    assert extract_json('{"a": [1, 2,], "b": {"c": 3,},}') == {"a": [1, 2], "b": {"c": 3}}


def test_trailing_comma_in_fenced_block() -> None:
    assert extract_json('```json\n{"answer": "two years",\n}\n```') == {"answer": "two years"}


def test_trailing_comma_fix_leaves_string_values_alone() -> None:
    # the comma-before-brace inside the string is data, not a trailing comma
    assert extract_json('{"a": "x, }", "b": "[1, ]",}') == {"a": "x, }", "b": "[1, ]"}


def test_braces_and_quotes_inside_strings() -> None:
    text = 'Result: {"reason": "use {x} and } here, say \\"hi\\" {", "ok": true} -- done'
    assert extract_json(text) == {"reason": 'use {x} and } here, say "hi" {', "ok": True}


def test_nested_objects() -> None:
    text = 'Answer: {"answer": "x", "citation": {"doc": "a.pdf", "page": 3}} (end)'
    assert extract_json(text) == {"answer": "x", "citation": {"doc": "a.pdf", "page": 3}}


@pytest.mark.parametrize("text", [
    '{"answer": "first"} {"answer": "second"}',
    'One: {"answer": "first"}\nTwo: {"answer": "second"}',
])
def test_two_objects_first_wins(text: str) -> None:
    assert extract_json(text) == {"answer": "first"}


def test_object_inside_a_list_is_found() -> None:
    assert extract_json('[{"answer": "x"}]') == {"answer": "x"}


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_empty_text(text: str) -> None:
    result = extract_json(text)
    assert isinstance(result, ParseFailure)
    assert result.reason == "empty response"
    assert result.text == text


@pytest.mark.parametrize("text", [
    "I don't know.",
    "上下文中没有提到。",
    "{not json at all}",
    '{"answer": "unterminated',
    "[1, 2, 3]",
    "42",
    '"just a string"',
])
def test_garbage_is_a_parse_failure(text: str) -> None:
    result = extract_json(text)
    assert isinstance(result, ParseFailure)
    assert result.reason == "no JSON object found"
    assert result.text == text  # the response is kept, never dropped


def test_parse_as_valid() -> None:
    text = '```json\n{"answer": "20:00", "confidence": "0.5", "citation": {"doc": "d", "page": 2}}\n```'
    result = parse_as(text, Answer)
    assert isinstance(result, Answer)
    assert result.answer == "20:00"
    assert result.confidence == 0.5
    assert result.citation == Citation(doc="d", page=2)


def test_parse_as_missing_field_names_it() -> None:
    text = '{"confidence": 0.4}'
    result = parse_as(text, Answer)
    assert isinstance(result, ParseFailure)
    assert result.reason.startswith("field 'answer':")
    assert "required" in result.reason.lower()
    assert result.text == text


def test_parse_as_wrong_type_names_the_field() -> None:
    result = parse_as('{"answer": "x", "confidence": "very high"}', Answer)
    assert isinstance(result, ParseFailure)
    assert result.reason.startswith("field 'confidence':")


def test_parse_as_nested_field_path() -> None:
    result = parse_as('{"answer": "x", "confidence": 1, "citation": {"doc": "d", "page": "three"}}', Answer)
    assert isinstance(result, ParseFailure)
    assert result.reason.startswith("field 'citation.page':")


def test_parse_as_passes_extraction_failures_through() -> None:
    empty = parse_as("", Answer)
    assert isinstance(empty, ParseFailure) and empty.reason == "empty response"
    garbage = parse_as("no json here", Answer)
    assert isinstance(garbage, ParseFailure) and garbage.reason == "no JSON object found"
