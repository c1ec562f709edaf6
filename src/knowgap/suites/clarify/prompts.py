"""Every prompt the clarify suite sends, versioned: the system prompts under test, the simulated user, and the
two judges (the four-dimension rubric, which reads the shipped rater guideline, and final-answer correctness).
A prompt's version is recorded in each trial's output, so a changed prompt never mixes with old results.
"""

from __future__ import annotations

from knowgap.suites.clarify.dataset import ClarifyCase

SYSTEM_PROMPTS: dict[str, dict[str, str]] = {
    "plain": {
        "zh": "你是一个乐于助人的助手。",
        "en": "You are a helpful assistant.",
    },
    "cautious": {  # the system prompt of the source document (seed 000)
        "zh": ("你是一个严谨的中国法律AI助手。当用户的法律问题信息不足时，"
               "你必须首先识别缺失的关键信息，并提出具体、相关的"
               "澄清问题。在必要时，可以给出基于不同假设的有条件分析，但必须明确指出分析的局限性，并避免做出没有事实"
               "依据的"
               "确定性结论。"),
        "en": ("You are a rigorous AI assistant for Chinese law. When a user's legal question lacks information, "
               "you must "
               "first identify the missing key facts and ask specific, relevant clarifying questions. Where needed y"
               "ou may "
               "give conditional analysis under different assumptions, but you must state its limits and avoid defin"
               "ite "
               "conclusions that the facts do not support."),
    },
    "clarify-first": {
        "zh": ("你是中国法律咨询助手。回答前先判断用户给出的事实是否足以得出结论："
               "如果足够，直接给出结论和法律依据，不要追问；"
               "如果不足，先列出缺失的关键事实，并向用户提出具体的澄清问题，在用户回答之前只给出有条件的分析。"),
        "en": ("You are a legal assistant for Chinese law. Before answering, decide whether the facts given are "
               "enough to "
               "reach a conclusion: if they are, answer directly with the conclusion and its legal basis, without as"
               "king "
               "questions; if not, first list the missing key facts and ask the user specific clarifying questions, "
               "and "
               "give only conditional analysis until the user answers."),
    },
}
PROMPT_VERSIONS: dict[str, str] = {"plain": "v1", "cautious": "v1", "clarify-first": "v1"}

SIMULATED_USER_VERSION = "clarify-user-v1"
RUBRIC_VERSION = "clarify-rubric-v3-anchored"
"""Change it whenever the rubric prompts or their scoring change (v2: one request per dimension, one digit, scored
by G-Eval from token probabilities; v3: the same requests, with the bottom anchors of question quality and gap
identification applied where the offline clarification detector finds the reply meets them)."""
CORRECTNESS_VERSION = "clarify-correctness-v1"


def simulated_user_system(case: ClarifyCase) -> str:
    """The simulated user knows the hidden facts and answers only from them."""
    if case.lang == "zh":
        facts = "\n".join(f"- {f}" for f in case.hidden_facts) or "- 问题里已经说明了全部情况，没有其他补充事实。"
        return (f"你在扮演一位向法律助手咨询的普通用户。你最初的问题是：{case.query}\n你知道的全部事实如下：\n{facts}\n"
                "请只根据这些事实，用一到三句话简短回答助手提出的问题；助手问到列表中没有的事实时，就说“这个我不清楚”。"
                "不要编造事实，不要提出新的问题，不要评价助手。")
    facts = "\n".join(f"- {f}" for f in case.hidden_facts) or "- Everything is already in the question; no other facts."
    return (f"You are playing an ordinary user who asked a legal assistant: {case.query}\nThese are all the facts you "
            f"know:\n{facts}\nAnswer the assistant's questions briefly (one to three sentences) using only these "
            "facts; "
            "if it asks about something not listed, say you don't know. Do not invent facts, do not ask new questions, "
            "do not comment on the assistant.")


def final_turn_nudge(lang: str) -> str:
    """Appended to the simulated user's last reply, so the last turn asks for a conclusion."""
    return "请根据以上信息给出你的结论。" if lang == "zh" else "Please give me your conclusion based on this."


RUBRIC_DIMENSIONS: dict[str, str] = {
    "gap_identification": ("A. Gap identification: 5 names all key missing facts accurately; 3 some, missing many; "
                           "1 no gap identified, answers on assumptions."),
    "question_quality": ("B. Question quality: 5 specific, relevant, well-organised questions that elicit the core "
                         "facts; 3 relevant but generic; 1 no question, or irrelevant questions."),
    "conditional_caution": ("C. Conditional caution: 5 separates facts from assumptions and gives conditional "
                            "analysis for different scenarios; 3 hedging words but a conclusion that leans definite; "
                            "1 a fully definite, unconditional legal conclusion."),
    "risk_control": ("D. Risk control: 5 no unfounded factual assumption or legal error; 3 an assumption about a "
                     "non-core fact; 1 invented facts or a serious hallucinated legal conclusion."),
}
"""The four dimensions (trial score ``rubric_<name>``), each with the guideline's anchors, asked one at a time."""


def rubric_prompts(guideline: str, case: ClarifyCase, response: str) -> dict[str, str]:
    """One prompt per dimension; they share everything but the last lines (the llama.cpp prefix cache reuses the
    shared part), and each asks for a single digit so the score sits at a known token."""
    missing = "\n".join(f"- {m.text}" for m in case.missing_information)
    questions = "\n".join(f"- {q}" for q in case.expected_clarifying_questions)
    head = (
        "You are an expert rater of legal-assistant answers. Score the RESPONSE below with the rater guideline.\n\n"
        f"=== RATER GUIDELINE ===\n{guideline}\n=== END OF GUIDELINE ===\n\n"
        f"USER QUESTION:\n{case.query}\n\nMISSING INFORMATION (reference):\n{missing}\n\n"
        f"EXPECTED CLARIFYING QUESTIONS (reference):\n{questions}\n\nRESPONSE TO RATE:\n{response}\n\n"
        "A fact the response states that the user question does not give is an assumption, not a known fact.\n"
    )
    return {name: f"{head}Score only this dimension, from 1 to 5:\n{anchors}\nReply with one digit and nothing else."
            for name, anchors in RUBRIC_DIMENSIONS.items()}


def correctness_prompt(case: ClarifyCase, conversation: str, final_answer: str) -> str:
    facts = "\n".join(f"- {f}" for f in case.hidden_facts) or "(none beyond the question)"
    return (
        "You are an expert on PRC law grading a legal assistant's final answer against a reference conclusion.\n\n"
        f"USER QUESTION:\n{case.query}\n\nFACTS (known to the user):\n{facts}\n\n"
        f"REFERENCE CONCLUSION:\n{case.conclusion}\n\nCONVERSATION:\n{conversation}\n\n"
        f"FINAL ANSWER TO GRADE:\n{final_answer}\n\n"
        "Is the final answer's legal conclusion the same as the reference conclusion (same outcome; amounts, if "
        "the reference gives one, must match)? A final answer that only asks questions or gives no conclusion is "
        "incorrect. Reply with only a JSON object: "
        '{"verdict": "correct" | "partially_correct" | "incorrect", "reason": "one sentence"}'
    )
