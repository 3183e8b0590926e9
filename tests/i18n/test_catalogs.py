"""Message catalogs: complete in both languages, every used key exists, no literal UI text.

Every visible string of the page comes from static/i18n/<lang>/<part>.json. These tests
fail when a key is missing in either language (in any part), when a template's data-i18n
key or a JS t("key") / catalog-key literal does not exist, and when a template or a JS file
puts a literal user-visible string into the page.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
I18N = ROOT / "static" / "i18n"
JS = ROOT / "static" / "js"
TEMPLATES = ROOT / "templates"
LANGS = ("en", "zh-CN")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
CJK = re.compile(r"[\u4e00-\u9fff]")

# Values that are the same in every language (symbols, formats, names of file formats).
SAME_IN_ALL_LANGUAGES = {
    "controls.ratio",
    "session.choice.number",
    "session.choice.percent_range",
    "session.slip_note",  # punctuation only: full-width brackets in Chinese
    # library names are proper nouns
    "names.lib.transformer_lens",
    "names.lib.huggingface",
    "names.lib.nnsight",
    "export.png",
    "export.svg",
    "lang.en",
    "lang.zh-CN",
    "errors.item",
    "errors.item_whole",
    "flow.step_up",
    "flow.step_down",
    "flow.step_up_nobias",
    "flow.step_down_nobias",
    "flow.step_up_gated",
    "flow.times",
    "flow.step_act_gated",
    "flow.step_down_gated",
    "flow.step_down_gated_nobias",
    "readout.shapes_gated",
    "readout.shapes",
    # matrix names in the weight grid are the paper's notation in every language
    "grid.w1",
    "grid.b1",
    "grid.w2",
    "grid.b2",
    # formulas and tensor names in the teaching views
    "block.arrow_ffn",
    "block.arrow_add",
    "block.arrow_ln",
    "block.step.ffn_input",
    "block.step.residual_sum",
    "block.step.output",
    "block.shapes",
    "variants.col.d_ff",
    "variants.points",
    "variants.act",
    "budget.col.ffn",
    "budget.ffn_formula",
    "budget.ffn_formula_gated",
    "budget.attn_formula",
    "budget.ffn_formula_nobias",
    "budget.ffn_formula_gated_nobias",
    "budget.attn_formula_nobias",
}
# Literal strings that may be put into the page: symbols only, no words.
JS_LITERAL_ALLOWED: set[tuple[str, str]] = {
    ("views.js", "—"),
}
# The product name in <title> before the scripts replace it with t("app.title").
TEMPLATE_TEXT_ALLOWED: set[tuple[str, str]] = {("base.html", "FFN Lab"), ("join.html", "FFN Lab")}


def parts(lang: str) -> dict[str, dict[str, str]]:
    return {
        f.stem: json.loads(f.read_text(encoding="utf-8"))
        for f in sorted((I18N / lang).glob("*.json"))
    }


def merged(lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for catalog in parts(lang).values():
        out |= catalog
    return out


def js_files() -> list[Path]:
    return sorted(JS.rglob("*.js"))


def template_files() -> list[Path]:
    return sorted(TEMPLATES.rglob("*.html"))


def test_both_languages_have_the_same_parts_and_keys() -> None:
    en, zh = parts("en"), parts("zh-CN")
    assert set(en) == set(zh), "a catalog part exists in one language only"
    for part in en:
        missing_zh = sorted(set(en[part]) - set(zh[part]))
        missing_en = sorted(set(zh[part]) - set(en[part]))
        assert not missing_zh, f"zh-CN/{part}.json misses {missing_zh}"
        assert not missing_en, f"en/{part}.json misses {missing_en}"


@pytest.mark.parametrize("lang", LANGS)
def test_no_key_is_defined_in_two_parts(lang: str) -> None:
    seen: dict[str, str] = {}
    for part, catalog in parts(lang).items():
        for key in catalog:
            assert key not in seen, f"{lang}: {key} is in both {seen[key]} and {part}"
            seen[key] = part


def test_placeholders_match_and_values_are_translated() -> None:
    en, zh = merged("en"), merged("zh-CN")
    for key, text in en.items():
        assert text.strip() and zh[key].strip(), f"{key} is empty"
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(zh[key])), key
        if key not in SAME_IN_ALL_LANGUAGES:
            assert CJK.search(zh[key]), f"zh-CN {key} is not translated: {zh[key]!r}"


# ---- keys used by templates and scripts ----


class _Collector(HTMLParser):
    """data-i18n keys, literal text nodes and literal text in visible attributes."""

    VISIBLE_ATTRS = ("title", "aria-label", "placeholder", "alt", "label")

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str] = []
        self.texts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        for name, value in attrs:
            if name in ("data-i18n", "data-i18n-label", "data-i18n-title") and value:
                self.keys.append(value)
            if name in self.VISIBLE_ATTRS and value and _has_words(value):
                self.texts.append(f"{name}={value!r}")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip and _has_words(data):
            self.texts.append(data.strip())


JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)


def _has_words(text: str) -> bool:
    """True when `text` holds letters outside Jinja expressions (a word a user would read)."""
    return bool(re.search(r"[^\W\d_]", JINJA.sub("", text)))


def _template(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(JINJA.sub("", path.read_text(encoding="utf-8")))
    return collector


T_CALL = re.compile(r"""\bt\(\s*(["'])([^"']+)\1""")
T_DYNAMIC = re.compile(r"""\bt\(\s*`([^`]*)`""")
STRING = re.compile(r"""(["'])((?:[a-z_]+)\.[\w.-]+)\1""")


def test_every_key_used_exists_in_both_languages() -> None:
    known = {lang: set(merged(lang)) for lang in LANGS}
    namespaces = {key.split(".")[0] for key in known["en"]}
    used: dict[str, str] = {}
    for path in template_files():
        for key in _template(path).keys:
            used[key] = path.name
    for path in js_files():
        source = path.read_text(encoding="utf-8")
        for _, key in T_CALL.findall(source):
            used[key] = path.name
        # Keys kept as data (lesson steps, error types) are string literals of a namespace.
        for _, text in STRING.findall(source):
            if text.split(".")[0] in namespaces and not text.endswith((".js", ".json")):
                used[text] = path.name
        for pattern in T_DYNAMIC.findall(source):
            regex = re.compile("^" + re.sub(r"\\\$\\\{[^}]*\\\}", ".+", re.escape(pattern)) + "$")
            assert any(regex.match(k) for k in known["en"]), f"{path.name}: t(`{pattern}`)"
    assert len(used) > 100
    for lang in LANGS:
        missing = {k: f for k, f in used.items() if k not in known[lang]}
        assert not missing, f"{lang} misses keys used in the page: {missing}"


def test_data_and_lesson_keys_are_caught_by_the_scan() -> None:
    """The scan sees keys kept as data (a lesson step), so a typo there would fail."""
    source = (JS / "lesson" / "steps.js").read_text(encoding="utf-8")
    keys = [text for _, text in STRING.findall(source) if text.startswith("lesson.")]
    assert len(keys) >= 16


# ---- no literal user-visible strings ----


@pytest.mark.parametrize("path", template_files(), ids=lambda p: p.name)
def test_templates_hold_no_literal_text(path: Path) -> None:
    texts = [x for x in _template(path).texts if (path.name, x) not in TEMPLATE_TEXT_ALLOWED]
    assert not texts, f"{path.name} has literal text (use data-i18n): {texts}"


# A string literal (or a template literal's fixed parts) that reaches the page.
SINKS = [
    re.compile(
        r"""\.(?:textContent|innerText|innerHTML|outerHTML|title|placeholder|label)\s*\+?=\s*(["'`])((?:\\.|(?!\1).)*)\1"""
    ),
    re.compile(
        r"""setAttribute\(\s*["'](?:aria-label|title|placeholder|alt|aria-valuetext)["']\s*,\s*(["'`])((?:\\.|(?!\1).)*)\1"""
    ),
    re.compile(r"""new Option\(\s*(["'`])((?:\\.|(?!\1).)*)\1"""),
    re.compile(r"""\b(?:alert|confirm|prompt)\(\s*(["'`])((?:\\.|(?!\1).)*)\1"""),
    re.compile(r"""\b(?:title|text|xTitle|yTitle)\s*:\s*(["'`])((?:\\.|(?!\1).)*)\1"""),
    re.compile(r"""\|\|\s*(["'`])((?:\\.|(?!\1).)*)\1\)?\s*(?:\+|;|\))"""),
]


def _literal_words(text: str) -> bool:
    return bool(re.search(r"[^\W\d_]", re.sub(r"\$\{[^}]*\}", "", text)))


@pytest.mark.parametrize("path", js_files(), ids=lambda p: str(p.relative_to(JS)))
def test_scripts_put_no_literal_text_into_the_page(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    code = re.sub(r"^\s*//.*$", "", source, flags=re.M)
    keys = set(merged("en"))  # a catalog key kept as data is not text
    found = []
    for sink in SINKS:
        for _, literal in sink.findall(code):
            if literal in keys:
                continue
            if _literal_words(literal) and (path.name, literal) not in JS_LITERAL_ALLOWED:
                found.append(literal)
    assert not found, f"{path.name} puts literal text into the page: {found}"


def test_the_literal_scan_catches_a_literal() -> None:
    """The scanner itself: a sample with literal UI text is caught, a t() call is not."""
    bad = (
        'el.textContent = "Hello"; b.setAttribute("aria-label", `Close ${x}`); '
        'new Option("Custom", "c");'
    )
    good = 'el.textContent = t("app.title"); el.textContent = `${a} [${b}]`;'
    hits = [lit for sink in SINKS for _, lit in sink.findall(bad) if _literal_words(lit)]
    assert sorted(hits) == sorted(["Hello", "Close ${x}", "Custom"])
    assert not [lit for sink in SINKS for _, lit in sink.findall(good) if _literal_words(lit)]
    collector = _Collector()
    collector.feed('<p>Hello</p><p data-i18n="x"></p><button aria-label="Close"></button>')
    assert collector.texts == ["Hello", "aria-label='Close'"]


# ---- Chinese typography ----

# Full-width punctuation carries its own spacing: a space after (or before) it is a stray.
FULL_WIDTH_PUNCT = "，。：；！？、）》」』】"
STRAY_SPACE = re.compile(rf"[{FULL_WIDTH_PUNCT}][ \u3000]|[ \u3000][{FULL_WIDTH_PUNCT}]")


def stray_spaces(text: str) -> list[str]:
    """The spots of `text` where a space touches full-width punctuation."""
    return [text[max(0, m.start() - 4) : m.end() + 4] for m in STRAY_SPACE.finditer(text)]


def test_no_stray_space_at_full_width_punctuation() -> None:
    found = {k: stray_spaces(v) for k, v in merged("zh-CN").items() if stray_spaces(v)}
    assert not found, f"zh-CN: a space next to full-width punctuation: {found}"


def test_the_stray_space_check_catches_one() -> None:
    assert stray_spaces("服务器拒绝了这个输入。 请求：太大") == ["这个输入。 请求：太"]
    assert stray_spaces("参数 ，太多") and not stray_spaces("由 PyTorch 计算，用时 5 毫秒")


def test_bit_for_bit_cannot_be_read_as_position_wise() -> None:
    """逐位 next to 逐位置 ("position-wise") reads as the same word: say 比特 (bits)."""
    en, zh = merged("en"), merged("zh-CN")
    keys = [k for k, v in en.items() if "bit-for-bit" in v or "bit for bit" in v]
    assert keys
    for key in keys:
        assert "比特" in zh[key] and "逐位" not in zh[key], (key, zh[key])
