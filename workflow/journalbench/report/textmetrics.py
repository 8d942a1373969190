"""Each text's size measured once per process, whichever figure or renderer asks.

Matplotlib measures a text (its width, height and descent) for every layout and every draw, and
keeps what it measured per renderer object: each figure has its own, and so has each of its
files (the PNG, cropped to its box, and the PDF). The notebooks' 47 figures measured 809
different texts 3,768 times (the title's host line 68 times, the arms' names in every legend):
1.4 s. A text's size depends on the kind of renderer and its dpi, the text, its font
properties, whether it is math, and the settings that choose and draw its font (`rcParams`
font., text., mathtext., pdf. and ps.), not on the figure or the canvas's size: under that key
it is kept for every figure of the process while plots.py lays one out (`titled`) and saves it.
They measured 1,009 times (0.5 s), the notebooks took 0.5-0.7 s less (5 alternating rounds,
median 19.8 -> 19.1 s), and the figures are the same bytes (tests/test_views.py compares them
with and without).

Matplotlib looks every measurement up through `matplotlib.text._get_text_metrics_with_cache`
(its own tests replace it the same way): `shared` puts ours there for a block and its own back
after. A matplotlib without it keeps its own cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import matplotlib as mpl
from matplotlib import text as mtext

HOOK = "_get_text_metrics_with_cache"
# the settings that choose a text's font and how it is drawn, so its size
SETTINGS = ("font.", "text.", "mathtext.", "pdf.", "ps.")
KEPT = 50_000  # measurements (a few hundred bytes each); all dropped when there are more
Size = tuple[float, float, float]
measured: dict[tuple, Size] = {}


def settings() -> tuple:
    """The settings of SETTINGS as they are now, as a key."""
    return tuple((name, repr(value)) for name, value in mpl.rcParams.items()
                 if name.startswith(SETTINGS))


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Within the block, every renderer's text measurements come from `measured` (made there
    when missing), under the settings at the block's start; matplotlib's own lookup after."""
    original = getattr(mtext, HOOK, None)
    if original is None or getattr(original, "shared", False):  # no hook, or ours already
        yield
        return
    now = settings()
    if len(measured) > KEPT:
        measured.clear()

    def metrics(renderer: Any, text: str, fontprop: Any, ismath: Any, dpi: float) -> Size:
        # the font properties' values, as their own hash and equality take them
        key = (now, type(renderer), getattr(renderer, "dpi", None), dpi, text,
               tuple(vars(fontprop).values()), ismath)
        found = measured.get(key)
        if found is None:
            found = measured[key] = renderer.get_text_width_height_descent(text, fontprop,
                                                                           ismath)
        return found

    metrics.shared = True  # type: ignore[attr-defined]
    setattr(mtext, HOOK, metrics)
    try:
        yield
    finally:
        setattr(mtext, HOOK, original)
