"""What the step tests share: a spy on the page's Plotly calls, the steps themselves (a new
input seed, a new Tokens value) and, run in the page, each chart drawn again from scratch
and each plot's place in its figure."""

from __future__ import annotations

from tests.browser.conftest import wait_rendered

SPY = """() => {
  window.ffnCalls = [];
  for (const name of ['react', 'newPlot', 'relayout', 'restyle']) {
    const f = Plotly[name];
    Plotly[name] = function (el, ...rest) {
      window.ffnCalls.push(`${name}:${el.id}`);
      return f.call(this, el, ...rest);
    };
  }
  for (const el of document.querySelectorAll('.flow .js-plotly-plot')) {
    el.querySelector('.xaxislayer-above').ffnKept = true;
  }
}"""

FLOW = ["input", "pre_activation", "hidden", "output"]


def step_seed(page, value: int) -> None:  # type: ignore[no-untyped-def]
    seq = page.locator("body").get_attribute("data-forward-seq")
    page.locator("#input_seed").fill(str(value))
    page.locator("#input_seed").dispatch_event("change")
    page.locator(f'body:not([data-forward-seq="{seq}"])').wait_for(state="attached")
    wait_rendered(page)


# Runs in the page: each chart drawn again from scratch by Plotly (newPlot of its data and
# layout in a container of its size): a heatmap's cells and colour-bar labels, a bar chart's
# bar outlines and printed values, and the tick labels.
FRESH = """async (ids) => {
  const out = {};
  const picture = (g) => {
    const image = g.querySelector('.hm image');
    return { cells: image && (image.getAttribute('href') || image.getAttribute('xlink:href')),
      box: image && ['x', 'y', 'width', 'height'].map((a) => image.getAttribute(a)),
      bar: [...g.querySelectorAll('.colorbar text')].map((t) => t.textContent),
      bars: [...g.querySelectorAll('.barlayer .point path')].map((p) => p.getAttribute('d')),
      shapes: [...g.querySelectorAll('.shapelayer path')].map((p) => p.getAttribute('d')),
      texts: [...g.querySelectorAll('.barlayer .point text')].map((t) =>
        [t.textContent, t.getAttribute('transform'), t.getAttribute('x'), t.getAttribute('y')]),
      // each tick label with its place (the order of the nodes is not part of the picture)
      ticks: [...g.querySelectorAll('.xtick text, .ytick text')].map((t) => [t.textContent,
        ...['transform', 'x', 'y'].map((a) => t.getAttribute(a))].join(' ')).sort() };
  };
  for (const id of ids) {
    const el = document.getElementById(id);
    const host = document.createElement('div');
    host.style.cssText = 'position:absolute;left:0;top:0';
    host.style.width = `${el.clientWidth}px`;
    host.style.height = `${el.clientHeight}px`;
    document.body.appendChild(host);
    await Plotly.newPlot(host, JSON.parse(JSON.stringify(el.data)),
      JSON.parse(JSON.stringify(el.layout)), { displayModeBar: false });
    out[id] = { page: picture(el), fresh: picture(host) };
    Plotly.purge(host);
    host.remove();
  }
  return out;
}"""


def step_tokens(page, value: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Move the Tokens slider to `value`; returns the forward answer drawn."""
    seq = page.locator("body").get_attribute("data-forward-seq")
    with page.expect_response(lambda r: r.url.endswith("/api/forward")) as answer:
        page.evaluate(
            """(v) => { const s = document.getElementById('tokens'); s.value = String(v);
              s.dispatchEvent(new Event('input', { bubbles: true })); }""",
            value,
        )
    page.locator(f'body:not([data-forward-seq="{seq}"])').wait_for(state="attached")
    wait_rendered(page)
    return answer.value.json()  # type: ignore[no-any-return]


# Runs in the page: each plot's place in its figure (Plotly's margins and plot area, px).
PLACES = """(ks) => ks.map((k) => {
  const { l, r, t, b, w, h } = document.getElementById(`plot-${k}`)._fullLayout._size;
  return [l, r, t, b, w, h];
})"""
