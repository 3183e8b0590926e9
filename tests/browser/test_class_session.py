"""A class session in real browsers: a lecturer and three students in separate contexts (one
a phone, 390x844 touch at scale 3, in zh-CN): follow, explore on my own, follow again, a
predict-then-reveal round, a dropped connection, a lecturer's reload, the end; and a server
restart that students see as "the session has ended"."""

from __future__ import annotations

from typing import Any

import pytest

from tests.serverproc import free_port, start_server, stop_server
from tests.sessionhelpers import Relay

TIMEOUT = 30_000
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 3,
}


@pytest.fixture(scope="module")
def pw(browser: Any) -> Any:
    """The session's Chromium (tests/conftest.py)."""
    return browser


def context(browser: Any, locale: str, **extra: Any) -> Any:
    options = {"viewport": {"width": 1280, "height": 720}, **extra}
    return browser.new_context(locale=locale, bypass_csp=True, **options)


def open_page(ctx: Any, url: str, errors: list[str]) -> Any:
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.locator(".js-plotly-plot").first.wait_for(timeout=TIMEOUT)
    return page


def lecturer_version(lecturer: Any) -> str:
    """The version students should show once everything the lecturer changed is out."""
    lecturer.locator("#session[data-version]:not([data-pending])").wait_for(
        state="attached", timeout=TIMEOUT
    )
    return str(lecturer.locator("#session").get_attribute("data-version"))


def followed(students: list[Any], version: str) -> None:
    for s in students:
        s.locator(f'#session[data-version="{version}"]').wait_for(state="attached", timeout=TIMEOUT)


def test_lecturer_and_three_students(pw: Any) -> None:
    proc, base = start_server({"FFN_LAB_SESSION_CREATE_BURST": "100"})
    relay = Relay(int(base.rsplit(":", 1)[1]))
    errors: list[str] = []
    contexts = []
    try:
        lc = context(pw, "en-US")
        contexts.append(lc)
        lecturer = open_page(lc, f"{base}/", errors)
        lecturer.click("#session-start")
        code = lecturer.locator("#session-code:not(:empty)").text_content(timeout=TIMEOUT)
        assert code and len(code) == 6
        assert lecturer.locator("#session-qr").evaluate("img => img.naturalWidth") > 0
        join = lecturer.locator("#session-link").get_attribute("href")
        assert join == f"/join/{code}"
        # the page was opened on 127.0.0.1: no phone reaches that, and the page says so
        loopback = lecturer.locator("#session-loopback")
        assert loopback.is_visible() and "127.0.0.1" in (loopback.text_content() or "")
        version = lecturer_version(lecturer)

        ca, cb, cc = (
            context(pw, "en-US"),
            context(pw, "zh-CN", **PHONE),
            context(pw, "en-US"),
        )
        contexts += [ca, cb, cc]
        a = open_page(ca, f"{base}{join}", errors)
        phone = open_page(cb, f"{base}{join}", errors)
        c = open_page(cc, f"{relay.base}{join}", errors)  # through a link we can cut
        students = [a, phone, c]
        followed(students, version)
        assert "session" not in (phone.url.split("?")[1] if "?" in phone.url else "")
        assert "正在跟随老师" in phone.locator("#session-status").text_content()
        for s in students:
            assert s.locator("#session-start").is_hidden()

        # follow: the lecturer picks a preset; every student's page shows it
        lecturer.select_option("#preset", "transformer-base")
        version = lecturer_version(lecturer)
        followed(students, version)
        for s in students:
            assert s.locator("#preset").input_value() == "transformer-base"
            s.locator("#d_ff-value").filter(has_text="2048").wait_for(timeout=TIMEOUT)

        # explore on my own: student a leaves; the others follow the next change
        a.click("#session-explore")
        assert a.locator("#session").get_attribute("data-following") == "0"
        assert "left the lecture" in a.locator("#session-status").text_content()
        kept = a.locator("#session").get_attribute("data-version")
        lecturer.select_option("#preset", "tiny")
        version = lecturer_version(lecturer)
        followed([phone, c], version)
        assert phone.locator("#preset").input_value() == "tiny"
        assert a.locator("#preset").input_value() == "transformer-base"
        assert a.locator("#session").get_attribute("data-version") == kept
        # follow again: back to the lecturer's current state
        a.click("#session-follow")
        followed([a], version)
        assert a.locator("#preset").input_value() == "tiny"
        assert a.locator("#session").get_attribute("data-following") == "1"

        # predict, then reveal: the tiny preset has 2*2*4 + 4 + 2 = 22 parameters
        lecturer.select_option("#session-kind", "parameter_count")
        lecturer.click("#session-ask")
        picks = {}
        for s in students:
            s.locator("#session-question:not([hidden]) .session-choice").first.wait_for(
                timeout=TIMEOUT
            )
        labels = [t.strip() for t in a.locator(".session-choice .label").all_text_contents()]
        right = labels.index("22")
        wrong = 0 if right else 1
        for s, i in ((a, right), (phone, right), (c, wrong)):
            s.locator(".session-choice").nth(i).tap() if s is phone else s.locator(
                ".session-choice"
            ).nth(i).click()
            s.locator("#session-question[data-answered]").wait_for(state="attached")
            picks[id(s)] = i
        lecturer.wait_for_function(
            """() => [...document.querySelectorAll('.session-choice .count')]
                 .reduce((n, el) => n + Number(el.dataset.count), 0) === 3""",
            timeout=TIMEOUT,
        )
        lecturer.click("#session-reveal")
        for s in [lecturer, *students]:
            s.locator("#session-question[data-revealed]").wait_for(
                state="attached", timeout=TIMEOUT
            )
            correct = s.locator(".session-choice.correct")
            assert correct.count() == 1
            assert correct.locator(".count").get_attribute("data-count") == "2"
        assert "The FFN says: 22 parameters" in a.locator("#session-answer").text_content()
        assert "FFN 的答案：22 个参数" in phone.locator("#session-answer").text_content()

        # a dropped connection: the relay cuts student c's stream, the lecturer changes the
        # page meanwhile, and c reconnects to the current state
        c.locator('#session[data-opens="1"]').wait_for(state="attached")
        relay.cut()
        lecturer.select_option("#preset", "transformer-base")
        version = lecturer_version(lecturer)
        c.locator('#session[data-opens="2"]').wait_for(state="attached", timeout=TIMEOUT)
        followed(students, version)
        assert c.locator("#preset").input_value() == "transformer-base"

        # the lecturer reloads: the session is kept (the tab's sessionStorage), and drives on
        lecturer.reload()
        lecturer.locator("#session-code").filter(has_text=code).wait_for(timeout=TIMEOUT)
        assert lecturer.locator("#session-start").is_hidden()
        lecturer.select_option("#preset", "tiny")
        followed(students, lecturer_version(lecturer))
        assert phone.locator("#preset").input_value() == "tiny"

        # the end: every student is told
        lecturer.once("dialog", lambda d: d.accept())
        lecturer.click("#session-end")
        for s in students:
            s.locator('#session[data-connection="ended"]').wait_for(
                state="attached", timeout=TIMEOUT
            )
        assert "ended" in a.locator("#session-status").text_content()
        assert "会话已结束" in phone.locator("#session-status").text_content()
        assert not errors, errors
    finally:
        for ctx in contexts:
            ctx.close()
        relay.close()
        stop_server(proc)


def test_restarted_server_says_the_session_ended(pw: Any) -> None:
    port = free_port()
    proc, base = start_server(port=port)
    ctx = context(pw, "en-US", **PHONE)
    errors: list[str] = []
    try:
        created = ctx.request.post(f"{base}/api/sessions").json()
        student = open_page(ctx, f"{base}{created['join_url']}", errors)
        student.locator('#session[data-connection="open"]').wait_for(state="attached")
        stop_server(proc)  # sessions were kept in that process only
        proc, base = start_server(port=port)
        student.locator('#session[data-connection="ended"]').wait_for(
            state="attached", timeout=TIMEOUT
        )
        assert "The session has ended" in student.locator("#session-status").text_content()
        assert student.locator("#session-explore").is_hidden()
        # a dead link: the join page says so and lets them retype the code
        missing = ctx.new_page()
        response = missing.goto(f"{base}{created['join_url']}")
        assert response is not None and response.status == 404
        missing.locator("#join-missing").wait_for()
        missing.fill("#join-code", "abcdef")
        missing.click("#join-go")
        missing.locator("#join-missing").wait_for()
        assert "/join/ABCDEF" in missing.url
    finally:
        ctx.close()
        stop_server(proc)
