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
after. A matplotlib without it keeps its own cache. The font's line metrics a layout reads are
kept too (`Fonts`, `Tables`, below).
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
# each state of the settings met, numbered: a measurement's key holds the number, as hashing the
# settings themselves (a tuple of 41 pairs, hashed again on every lookup) took a sixth of the
# lookups' time (py-spy, the notebooks' kernel)
states: dict[tuple, int] = {}


def settings() -> int:
    """The number of the settings of SETTINGS as they are now."""
    now = tuple((name, repr(value)) for name, value in mpl.rcParams.items()
                if name.startswith(SETTINGS))
    return states.setdefault(now, len(states))


def font_key(prop: Any) -> tuple:
    """Font properties as a key: their values, as their own hash and equality take them."""
    return tuple(vars(prop).values())


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
        fonts_found.clear()
        tables.clear()

    def metrics(renderer: Any, text: str, fontprop: Any, ismath: Any, dpi: float) -> Size:
        key = (now, type(renderer), getattr(renderer, "dpi", None), dpi, text,
               font_key(fontprop), ismath)
        found = measured.get(key)
        if found is None:
            found = measured[key] = renderer.get_text_width_height_descent(text, fontprop,
                                                                           ismath)
        return found

    metrics.shared = True  # type: ignore[attr-defined]
    manager, get_font = mtext.fontManager, mtext.get_font
    setattr(mtext, HOOK, metrics)
    mtext.fontManager, mtext.get_font = Fonts(now, manager), font_tables(now, get_font)
    try:
        yield
    finally:
        setattr(mtext, HOOK, original)
        mtext.fontManager, mtext.get_font = manager, get_font


# A text's layout (Text._get_layout) also reads its font's line metrics on every call: it finds
# the font's files (`fontManager._find_fonts_by_props`), opens them (`get_font`) and copies
# three of the font's tables (`get_sfnt_table`), nearly half the layout's time. Within `shared`
# these two names of matplotlib.text, used there and nowhere else, keep what they found: the
# files per font properties and settings, the tables per font.
fonts_found: dict[tuple, Any] = {}
tables: dict[tuple, Tables] = {}


class Fonts:
    """matplotlib.text's `fontManager` within `shared`: its font search kept per font
    properties' values and settings; anything else is the manager's own."""

    def __init__(self, now: int, manager: Any) -> None:
        self.now, self.manager = now, manager

    def _find_fonts_by_props(self, prop: Any) -> Any:
        key = (self.now, len(self.manager.ttflist), font_key(prop))
        if key not in fonts_found:
            fonts_found[key] = self.manager._find_fonts_by_props(prop)
        return fonts_found[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.manager, name)


class Tables:
    """A font as matplotlib.text's `get_font` gives it within `shared`: each of its tables
    read once (the layout only reads them); anything else is the font's own."""

    def __init__(self, font: Any) -> None:
        self.font, self.read = font, {}

    def get_sfnt_table(self, name: str) -> Any:
        if name not in self.read:
            self.read[name] = self.font.get_sfnt_table(name)
        return self.read[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.font, name)


def font_tables(now: int, get_font: Any) -> Any:
    """matplotlib.text's `get_font` within `shared`: a font's Tables, kept per its files and
    the settings."""

    def opened(paths: Any, *args: Any, **kwargs: Any) -> Tables:
        key = (now, tuple(paths) if isinstance(paths, list) else paths, args,
               tuple(sorted(kwargs.items())))
        if key not in tables:
            tables[key] = Tables(get_font(paths, *args, **kwargs))
        return tables[key]

    return opened
