from knowgap.text import content_tokens, detect_lang, normalize, sentences, tokens


def test_detect_lang_chinese_english_and_mixed() -> None:
    assert detect_lang("公司开除我，能拿赔偿吗？") == "zh"
    assert detect_lang("Can I get compensation if I am fired?") == "en"
    assert detect_lang("我在 Acme Inc. 工作了三年") == "zh"  # a few Latin letters in a Chinese sentence
    assert detect_lang("The clause says 违约金 is 20%") == "en"
    assert detect_lang("12345 !!!") == "en"


def test_normalize_full_width_and_case() -> None:
    assert normalize("ＡＢＣ　１２３") == "abc 123"
    assert normalize("Don’t  Stop\n") == "don't stop"


def test_tokens_segment_chinese_words_not_characters() -> None:
    words = tokens("用人单位违法解除劳动合同应支付赔偿金")
    assert "劳动合同" in words and "赔偿金" in words
    assert "劳" not in words


def test_tokens_english_keeps_numbers_and_contractions() -> None:
    assert tokens("The fee is 3.5% (not 4%), don't pay twice!") == [
        "the", "fee", "is", "3.5", "not", "4", "don't", "pay", "twice"]


def test_tokens_mixed_text() -> None:
    words = tokens("我的iPhone 15在2024年坏了")
    assert "iphone" in words and "15" in words and "2024" in words


def test_content_tokens_drop_stopwords_in_both_languages() -> None:
    assert content_tokens("What is the deadline for the claim?") == ["deadline", "claim"]
    zh = content_tokens("我的工资是多少？")
    assert "工资" in zh and "的" not in zh and "我" not in zh


def test_sentences_chinese() -> None:
    text = "公司未签劳动合同。我工作了八个月！可以要求双倍工资吗？"
    assert sentences(text) == ["公司未签劳动合同。", "我工作了八个月！", "可以要求双倍工资吗？"]


def test_sentences_english_keeps_abbreviations_and_decimals() -> None:
    text = "Dr. Tan pays 3.5 dollars, e.g. for parking. The CPF rate is 20%. Ask the board."
    assert sentences(text) == ["Dr. Tan pays 3.5 dollars, e.g. for parking.", "The CPF rate is 20%.",
                               "Ask the board."]


def test_sentences_blank_lines_and_lists() -> None:
    text = "Eligibility\n\n- You must be 21.\n- You must hold a licence"
    assert sentences(text) == ["Eligibility", "- You must be 21.", "- You must hold a licence"]
