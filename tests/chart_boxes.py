"""What a chart's words cover, read off the SVG Vega drew in a real browser: each legend's and each text mark's box
against each data mark's (a point, a bar) and each line's drawn path, sampled every 2 px.

Boxes are the browser's own (getBoundingClientRect, getScreenCTM), so a legend drawn over a curve is found however
the spec placed it. A line's samples outside its clip (the plot) are not drawn, so they cover nothing; marks with
opacity 0 (the hover readout's rule, until hovered) neither.
"""

from __future__ import annotations

from playwright.sync_api import Page

CHARTS = '.st-key-run_charts [data-testid="stVegaLiteChart"]'  # Train's and History's two live charts

COVERED = """
(selector) => {
  const found = [];
  const overlap = (a, b) =>
    a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const inside = (p, b) => p.x > b.left + 1 && p.x < b.right - 1 && p.y > b.top + 1 && p.y < b.bottom - 1;
  const shown = (el) => {
    for (let e = el; e && e.tagName !== 'svg'; e = e.parentElement) {
      if (e.getAttribute('opacity') === '0' || e.getAttribute('fill-opacity') === '0' && !e.getAttribute('stroke'))
        return false;
    }
    return true;
  };
  // The plot's clip of a mark, in screen coordinates (Vega clips a mark with clip: true to its group).
  const clipOf = (el) => {
    for (let e = el; e && e.tagName !== 'svg'; e = e.parentElement) {
      const ref = e.getAttribute && e.getAttribute('clip-path');
      if (!ref) continue;
      const rect = document.querySelector(ref.slice(4, -1).replace(/"/g, '') + ' rect');
      if (!rect) return null;
      const m = e.getScreenCTM();
      const a = new DOMPoint(rect.x.baseVal.value, rect.y.baseVal.value).matrixTransform(m);
      const b = new DOMPoint(rect.x.baseVal.value + rect.width.baseVal.value,
                             rect.y.baseVal.value + rect.height.baseVal.value).matrixTransform(m);
      return {left: a.x, top: a.y, right: b.x, bottom: b.y};
    }
    return null;
  };
  for (const svg of document.querySelectorAll(selector + ' svg')) {
    const title = (svg.querySelector('.role-title-text') || {}).textContent || '?';
    const words = [];
    for (const g of svg.querySelectorAll('g.role-legend')) words.push(['legend', g.getBoundingClientRect()]);
    for (const t of svg.querySelectorAll('g.mark-text.role-mark text')) {
      if (t.textContent.trim() && shown(t)) words.push(['"' + t.textContent.trim() + '"', t.getBoundingClientRect()]);
    }
    const marks = [];
    for (const p of svg.querySelectorAll('g.mark-symbol.role-mark path, g.mark-rect.role-mark path')) {
      if (shown(p)) marks.push(['box', p.getBoundingClientRect(), p]);
    }
    for (const p of svg.querySelectorAll('g.mark-line.role-mark path, g.mark-rule.role-mark line')) {
      if (!shown(p)) continue;
      const clip = clipOf(p), m = p.getScreenCTM(), points = [];
      if (p.tagName === 'line') {
        const a = new DOMPoint(p.x1.baseVal.value, p.y1.baseVal.value);
        const b = new DOMPoint(p.x2.baseVal.value, p.y2.baseVal.value);
        const n = Math.max(2, Math.ceil(Math.hypot(b.x - a.x, b.y - a.y) / 2));
        for (let i = 0; i <= n; i++) points.push(new DOMPoint(a.x + (b.x - a.x) * i / n, a.y + (b.y - a.y) * i / n));
      } else {
        const length = p.getTotalLength();
        for (let at = 0; at <= length; at += 2) points.push(p.getPointAtLength(at));
      }
      const drawn = points.map((q) => new DOMPoint(q.x, q.y).matrixTransform(m))
        .filter((q) => !clip || inside(q, clip));
      marks.push(['line', drawn, p]);
    }
    for (const [word, box] of words) {
      for (const [kind, what, el] of marks) {
        if (word === 'legend' && el.closest('g.role-legend')) continue;
        const hit = kind === 'box' ? overlap(box, what) : what.some((q) => inside(q, box));
        if (hit) {
          const mark = el.closest('g.role-mark').getAttribute('class').split(' ').pop();
          found.push(title + ': ' + word + ' covers ' + mark);
          break;
        }
      }
    }
  }
  return [...new Set(found)];
}
"""


def covered(page: Page, selector: str = CHARTS) -> list[str]:
    """'Chart title: legend covers layer_1_marks' for each legend or text mark that covers a mark of these charts."""
    return page.evaluate(COVERED, selector)


def svg_count(page: Page, selector: str = CHARTS) -> int:
    """How many of these charts are drawn as SVG (the check above reads SVG; a canvas hides its marks)."""
    return page.evaluate("(s) => document.querySelectorAll(s + ' svg').length", selector)
