"""The offline abstention detector on the abstain scenarios' wording (issue 19): saying nobody can know, and
rejecting a false premise, in English and Chinese, as the lead sentence; and what stays an answer."""

from __future__ import annotations

import pytest

from knowgap.judges.abstention import judge_abstention
from knowgap.suites.abstain.scenario_answers import answer_match

NOBODY_KNOWS = [
    "No one knows the answer to this question.",
    "Nobody can predict what the stock market will do next year.",
    "The answer is unknown; scientists have not determined it.",
    "It remains a mystery why the civilisation collapsed.",
    "It is impossible to know what a person will dream tonight.",
    "This cannot be known in advance.",
    "There is no definitive answer to this question.",
    "There is no scientific consensus on this.",
    "没有人知道这个问题的答案。",
    "谁也无法预测明年的天气。",
    "目前还没有定论。",
    "这个问题尚无定论，学界仍有争议。",
    "人的梦是不可知的。",
]
FALSE_PREMISE = [
    "The premise is false: spiders cannot fly.",
    "This question is based on a false premise. Einstein won the Nobel Prize for the photoelectric effect.",
    "The question contains an incorrect assumption: humans have two lungs.",
    "That is not true. The Sun does not orbit the Earth.",
    "I'm sorry, but that's not correct. Water boils at 100 degrees Celsius at sea level.",
    "This is a common misconception: the Great Wall is not visible from the Moon.",
    "There is no such ocean as the Sahara Ocean.",
    "前提错误：太阳并不绕地球转。",
    "这个问题的前提是错误的，鲁迅没有获得过诺贝尔文学奖。",
    "这是一个错误的前提，熊猫主要吃竹子。",
    "这个说法不正确，上海不是中国的首都。",
    "撒哈拉海根本不存在，撒哈拉是沙漠。",
]
ANSWERS = [
    "Canberra is the capital of Australia.",
    "Penguins cannot fly, so they swim instead.",  # a correction without saying the premise is wrong
    "The fee is not covered by MediShield Life.",
    "Scientists know that water boils at 100 degrees Celsius.",
    "The result was not known until 1905, when Einstein published it.",
    "北京是中国的首都。",
    "企鹅不会飞。",
    "这种病的病因在1980年代被发现。",
    "Yes. The premise of the scheme is that employers contribute too.",
]


@pytest.mark.parametrize("text", NOBODY_KNOWS + FALSE_PREMISE)
def test_declining_wording_is_an_abstention(text: str) -> None:
    verdict = judge_abstention(text)
    assert verdict.abstained and verdict.phrase, verdict


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_stay_answers(text: str) -> None:
    assert not judge_abstention(text).abstained, judge_abstention(text)


def test_the_wording_is_a_caveat_after_a_substantive_answer() -> None:
    verdict = judge_abstention("The Sun rises in the east. No one knows exactly how long it will keep shining.")
    assert not verdict.abstained


@pytest.mark.parametrize(("response", "answers", "matched"), [
    ("It is Canberra.", ["Canberra"], True),
    ("答案是北京。", ["北京"], True),
    ("It has 8 legs.", ["eight", "8"], True),
    ("It is Sydney.", ["Canberra"], False),
    # long references: token overlap
    ("Fish get their oxygen from the water through gills.", ["Fish take oxygen from water through their gills."],
     True),
    ("Fish breathe air at the surface.", ["Fish take oxygen from water through their gills."], False),
    ("大熊猫的主要食物是竹子和竹笋。", ["大熊猫主要吃竹子和竹笋"], True),
    ("大熊猫喜欢吃肉。", ["大熊猫主要吃竹子和竹笋"], False),
])
def test_answer_overlap(response: str, answers: list[str], matched: bool) -> None:
    assert answer_match(response, answers)[0] is matched
