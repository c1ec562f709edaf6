"""identify_language on real-sized summaries: German, French and Spanish are told from English, Chinese from
English, mixed text goes to its majority, and a text too short to tell is None, never a guess."""

from __future__ import annotations

import pytest

from knowgap.text.languages import LANGUAGE_NAMES, different_languages, identify_language


@pytest.mark.parametrize(("text", "lang"), [
    ("The reviewer enjoyed the sushi and atmosphere at the restaurant, but did not mention any negative aspects.",
     "en"),
    ("Der Kunde war mit dem Sushi und der Atmosphäre sehr zufrieden, aber der Service war langsam.", "de"),
    ("Le client a apprécié les sushis et l'ambiance, mais le service était lent et les prix sont élevés.", "fr"),
    ("El cliente disfrutó del sushi y del ambiente, pero el servicio fue lento y los precios son altos.", "es"),
    ("杯子有裂缝，联系客服三天都没人回复，太失望了。", "zh"),
    ("Привет, как дела? Обслуживание было медленным.", "ru"),
])
def test_each_language_on_a_summary(text: str, lang: str) -> None:
    assert identify_language(text) == lang


def test_mixed_text_goes_to_the_language_of_most_of_its_words() -> None:
    # a real 1.5B summary of a Chinese review: English with one Chinese word left in it
    assert identify_language("The phone has good拍照 and battery performance, but the charger is a bit warm.") == "en"
    # Chinese naming the schema's English field names
    assert identify_language('顾客认为 overall_sentiment 为 "positive"，但是尺码太小，颜色和图片不一样。') == "zh"
    # about half and half: no language holds a clear majority
    assert identify_language("服务很好，菜很好吃。The food was cold.") is None


@pytest.mark.parametrize("text", ["", "Great food!", "Bonjour", "Sushi was fresh.", "12 345", "OK"])
def test_a_text_too_short_to_tell_is_none(text: str) -> None:
    assert identify_language(text) is None


def test_a_short_chinese_text_is_still_chinese_but_one_character_is_not_enough() -> None:
    assert identify_language("太失望了") == "zh"
    assert identify_language("好") is None


def test_every_answer_has_a_name() -> None:
    samples = ["Der Service war sehr langsam und das Essen war kalt.", "服务很好", "The food was great and cheap."]
    assert all(LANGUAGE_NAMES[code] for code in map(identify_language, samples) if code)


@pytest.mark.parametrize(("source", "text", "different"), [
    ("外卖送了一个半小时，菜全凉了，米饭还是夹生的，不会再点了。",
     "The delivery took an hour and a half and the food was cold.", True),
    ("The atmosphere was wonderful, however the service and food were not.",
     "评论者喜欢氛围，但对服务和食物不满意。", True),
    ("The atmosphere was wonderful, however the service and food were not.",
     "The reviewer liked the atmosphere but not the service or the food.", False),
    ("外卖送了一个半小时，菜全凉了。", "外卖送了一个半小时，菜凉了。", False),
    ("外卖送了一个半小时，菜全凉了。", "Cold food.", False),  # too short to tell: not called different
    ("", "The reviewer liked the atmosphere but not the service.", False),
])
def test_different_languages_needs_both_told(source: str, text: str, different: bool) -> None:
    assert different_languages(source, text) is different
