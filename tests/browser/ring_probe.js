// Which lesson rings (.lesson-ring outlines) cross visible text outside them: read by
// tests/browser/test_lesson_ring.py. Returns { rings: count, crossed: [{ ring, text }] }.
() => {
  // the part of a text's box that shows: clipped by every scrolling box around it
  const shown = (el, rect) => {
    let { left, top, right, bottom } = rect;
    for (let a = el.parentElement; a; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      left = Math.max(left, c.left); right = Math.min(right, c.right);
      top = Math.max(top, c.top); bottom = Math.min(bottom, c.bottom);
    }
    return { left, top, right, bottom, width: right - left, height: bottom - top };
  };
  const crossed = [];
  const rings = [...document.querySelectorAll('.lesson-ring')].filter((r) => r.checkVisibility());
  for (const ring of rings) {
    const cs = getComputedStyle(ring);
    const offset = parseFloat(cs.outlineOffset) || 0;
    const width = parseFloat(cs.outlineWidth) || 0;
    const box = ring.getBoundingClientRect();
    const outer = { l: box.left - offset - width, t: box.top - offset - width,
      r: box.right + offset + width, b: box.bottom + offset + width };
    const inner = { l: box.left - offset, t: box.top - offset, r: box.right + offset, b: box.bottom + offset };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.textContent.trim() || !el || el.closest('#lesson, .sr-heading, .sr-only')) continue;
      if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const t of [...range.getClientRects()].map((r) => shown(el, r))) {
        if (t.width < 1 || t.height < 1) continue;
        const touches = t.left < outer.r && t.right > outer.l && t.top < outer.b && t.bottom > outer.t;
        const within = t.left >= inner.l && t.right <= inner.r && t.top >= inner.t && t.bottom <= inner.b;
        if (touches && !within) {
          crossed.push({ ring: ring.id || ring.className, text: node.textContent.trim().slice(0, 40) });
          break;
        }
      }
    }
  }
  return { rings: rings.length, crossed };
}
