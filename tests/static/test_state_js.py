"""static/js/state.js under Node: the URL schema round-trips every setting and refuses bad
values with a fallback to the default (the browser tests check the same through the page)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.api.routes.pages import boot_data

ROOT = Path(__file__).resolve().parents[2]
STATE_JS = ROOT / "static" / "js" / "state.js"
STEPS_JS = ROOT / "static" / "js" / "lesson" / "steps.js"

SCRIPT = """
const fs = require("fs");
const load = (path) =>
  import("data:text/javascript," + encodeURIComponent(fs.readFileSync(path, "utf8")));
const input = JSON.parse(process.argv[3]);
Promise.all([load(process.argv[1]), load(process.argv[2])]).then(([m, lesson]) => {
  // The page builds the schema with the lesson's step count (static/js/main.js).
  const schema = m.makeSchema(input.boot, { steps: lesson.STEPS.length });
  const out = input.queries.map((q) => {
    const [search, hash] = Array.isArray(q) ? q : [q, ""];
    const parsed = m.parseState(schema, search, hash);
    const fragment = m.formatFragment(schema, parsed.state);
    return { state: parsed.state, invalid: parsed.invalid, present: [...parsed.present],
             again: m.formatState(schema, parsed.state), fragment: fragment.text,
             tooLarge: fragment.tooLarge };
  });
  if (input.encode) {
    // own numbers -> fragment -> back (the page's "copy link" and opening it)
    const state = m.parseState(schema, "", "").state;
    Object.assign(state, input.encode);
    const fragment = m.formatFragment(schema, state);
    const back = m.parseState(schema, "", fragment.text);
    out.push({ fragment: fragment.text, tooLarge: fragment.tooLarge, x: back.state.x,
               w: back.state.w, invalid: back.invalid });
  }
  process.stdout.write(JSON.stringify(out));
});
"""


def run_state(queries: list, encode: dict | None = None) -> list[dict]:  # type: ignore[type-arg]
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    boot = {k: v for k, v in boot_data().items() if k != "i18n"}
    payload = json.dumps({"boot": boot, "queries": queries, "encode": encode})
    result = subprocess.run(
        [node, "-e", SCRIPT, str(STATE_JS), str(STEPS_JS), payload],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_every_setting_round_trips_through_the_url() -> None:
    query = (
        "?preset=bert-base&d_model=768&d_ff=3072&activation=gelu&tokens=12&bias=0&seed=5"
        "&input_seed=9&position=3&scale=2.5&mode=train&dropout=0.3&panel=perturb&lang=zh-CN"
        "&embed=1&hide=seed,lang&lesson=1&step=4&big=1"
    )
    [result] = run_state([query])
    assert result["invalid"] == []
    state = result["state"]
    assert state["preset"] == "bert-base" and state["d_model"] == 768 and state["bias"] is False
    assert state["scale"] == 2.5 and state["mode"] == "train" and state["hide"] == ["seed", "lang"]
    assert state["panel"] == "perturb" and state["lang"] == "zh-CN" and state["step"] == 4
    assert result["again"] == query
    assert len(result["present"]) == 19


def test_defaults_make_an_empty_query() -> None:
    [result] = run_state([""])
    assert result["again"] == "" and result["invalid"] == [] and result["present"] == []
    assert result["state"]["d_model"] == 16 and result["state"]["hide"] == []


@pytest.mark.parametrize(
    ("query", "name", "default"),
    [
        ("?d_model=abc", "d_model", 16),
        ("?d_model=0", "d_model", 16),
        ("?d_ff=1e3", "d_ff", 64),
        ("?tokens=65", "tokens", 6),
        ("?activation=tanh", "activation", "relu"),
        ("?scale=9", "scale", 1),
        ("?scale=", "scale", 1),
        ("?bias=maybe", "bias", True),
        ("?mode=test", "mode", "eval"),
        ("?panel=nowhere", "panel", ""),
        ("?lang=fr", "lang", ""),
        ("?step=0", "step", 1),
        ("?step=99", "step", 1),
        ("?embed=yes", "embed", False),
    ],
)
def test_invalid_values_fall_back_and_are_reported(query: str, name: str, default: object) -> None:
    [result] = run_state([query])
    assert result["state"][name] == default
    assert result["invalid"] == [{"name": name, "raw": query.split("=", 1)[1]}]
    assert result["again"] == ""


def test_a_list_keeps_its_valid_items_and_unknown_names_are_reported() -> None:
    [result] = run_state(["?hide=seed,bogus,seed&colour=red"])
    assert result["state"]["hide"] == ["seed"]
    assert {e["name"] for e in result["invalid"]} == {"hide", "colour"}
    assert result["again"] == "?hide=seed"


def test_step_accepts_every_lesson_step_and_no_more() -> None:
    """`step` runs from 1 to the number of steps in static/js/lesson/steps.js."""
    total = len(re.findall(r'^\s*\{ id: "', STEPS_JS.read_text(encoding="utf-8"), re.M))
    assert total >= 10
    last, beyond = run_state([f"?lesson=1&step={total}", f"?lesson=1&step={total + 1}"])
    assert last["invalid"] == [] and last["state"]["step"] == total
    assert beyond["invalid"] == [{"name": "step", "raw": str(total + 1)}]
    assert beyond["state"]["step"] == 1


def test_panel_settings_and_the_neuron_round_trip() -> None:
    query = "?heads=4&norm=pre&match=1&dropout_seed=7&unit=12"
    [result] = run_state([query])
    assert result["invalid"] == []
    state = result["state"]
    assert (state["heads"], state["norm"], state["match"]) == (4, "pre", True)
    assert (state["dropout_seed"], state["unit"]) == (7, 12)
    assert result["again"] == query
    [default] = run_state([""])
    assert default["state"]["unit"] == -1 and default["state"]["norm"] == "post"
    [bad] = run_state(["?norm=middle&heads=0"])
    assert {e["name"] for e in bad["invalid"]} == {"norm", "heads"}


def test_own_vectors_and_typed_weights_round_trip_through_the_fragment() -> None:
    x = [[0.1, -2.0, 3.5], [1e-3, 4.0, -0.7]]
    w = {"w1": [[0.3, 0.2]], "b1": [1.0, -2.5], "w2": [[1.0], [0.25]], "b2": [0.5]}
    [result] = run_state([], encode={"x": x, "w": w})
    assert (
        result["fragment"].startswith("#x=2x3.")
        and "&w=w1:1x2,b1:2,w2:2x1,b2:1." in result["fragment"]
    )
    assert result["invalid"] == []
    assert result["x"] == x  # float32 in the link, the shortest decimals back
    assert result["w"] == w
    assert len(result["fragment"]) < 120  # compact: 4 bytes a number, base64
    # and the page reads the fragment of a link it is opened with
    [opened] = run_state([["?source=own", result["fragment"]]])
    assert opened["state"]["x"] == x and opened["state"]["w"] == w
    assert opened["again"] == "?source=own" and opened["fragment"] == result["fragment"]


def test_a_bad_fragment_falls_back_and_is_reported() -> None:
    [result] = run_state([["", "#x=2x3.AAAA&w=nonsense"]])
    assert result["state"]["x"] is None and result["state"]["w"] is None
    assert {e["name"] for e in result["invalid"]} == {"x", "w"}


def test_numbers_too_large_for_a_link_are_left_out_and_named() -> None:
    x = [[float(i + j) for j in range(512)] for i in range(16)]  # 8192 floats: ~44 k chars
    [result] = run_state([], encode={"x": x})
    assert result["fragment"] == "" and result["tooLarge"] == ["x"]
