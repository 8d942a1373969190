"""The HTML report as headless Chromium sees it: one browser loads every page of a folder in
frames of a probe page (file URLs may read each other with --allow-file-access-from-files) and
reports, per page, each image with its natural width (0: it did not load), each link as the
browser resolved it, and each element id (the anchors a link may point to). `problems` turns
that into the broken images and links. `first_screen` renders one page in a frame of a screen's
size and reports which of its chosen elements that frame shows before any scrolling and how
wide the page is."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHROMIUM = shutil.which("chromium")
# A page that loads each URL in a frame and reports, per URL, what `look(page, url)` (a
# JavaScript function of the frame's document) returns, as JSON in its <pre id="probed">.
FRAMES = """<!doctype html><html><body><pre id="probed"></pre><script>
const pages = %s, found = {};
let left = pages.length;
%s
function done(url, what) {
  found[url] = what;
  if (--left === 0) document.getElementById("probed").textContent = JSON.stringify(found);
}
for (const url of pages) {
  const frame = document.createElement("iframe");
  frame.onload = () => {
    try { done(url, look(frame.contentDocument, url)); }
    catch (error) { done(url, {error: String(error)}); }
  };
  frame.src = url;
  document.body.appendChild(frame);
}
</script></body></html>
"""
PROBE = """function look(page) {
  return {
    images: [...page.images].map(i => [i.src, i.complete ? i.naturalWidth : 0]),
    links: [...page.querySelectorAll("a[href]")].map(a => a.href),
    ids: [...page.querySelectorAll("[id]")].map(e => e.id),
    text: page.body.innerText};
}"""


def probe(folder: Path, scratch: Path) -> dict[str, dict]:
    """Every *.html page under `folder` as Chromium rendered it, by its file URL."""
    pages = sorted(p.resolve().as_uri() for p in folder.rglob("*.html"))
    page = scratch / "probe.html"
    page.write_text(FRAMES % (json.dumps(pages), PROBE))
    return rendered_probe(page, ["--virtual-time-budget=30000"], timeout=300)


def rendered_probe(page: Path, flags: list[str], timeout: float) -> dict:
    """What a probe page wrote into its <pre id="probed"> (JSON), once Chromium ran it."""
    result = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--allow-file-access-from-files", *flags, "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<pre id="probed">(.*?)</pre>', result.stdout, re.S)
    assert match and match.group(1), f"the probe did not finish: {result.stdout[-2000:]}"
    return json.loads(unescape(match.group(1)))


def unescape(text: str) -> str:
    """A <pre>'s text as --dump-dom serialises it."""
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"),
                         ("&nbsp;", "\u00a0"), ("&amp;", "&")):
        text = text.replace(entity, char)
    return text


def ids_in(path: Path, probed: dict[str, dict]) -> set[str]:
    """The ids of a page: as rendered where it was probed, else read from its HTML."""
    rendered = probed.get(path.as_uri())
    if rendered and "ids" in rendered:
        return set(rendered["ids"])
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(errors="replace")))


def problems(probed: dict[str, dict]) -> list[str]:
    """Each image that did not load, each link to a file that does not exist or to an anchor
    its page lacks, and each page that could not be read."""
    found = []
    for url, page in probed.items():
        name = unquote(urlsplit(url).path)
        if "error" in page:
            found.append(f"{name}: unreadable: {page['error']}")
            continue
        found += [f"{name}: image {src} did not load" for src, width in page["images"]
                  if not width]
        for link in page["links"]:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https", "mailto"):
                continue  # not checkable offline
            target = Path(unquote(parts.path))
            if parts.scheme != "file" or not target.exists():
                found.append(f"{name}: link {link} leads nowhere")
            elif parts.fragment and target.is_file() and target.suffix == ".html" and (
                    unquote(parts.fragment) not in ids_in(target, probed)):
                found.append(f"{name}: link {link}: no #{parts.fragment} in its page")
    return found


SCREEN = """<!doctype html><html><body style="margin:0"><pre id="probed"></pre>
<iframe id="screen" style="width:%dpx;height:%dpx;border:0"></iframe><script>
const frame = document.getElementById("screen");
frame.onload = () => {
  const page = frame.contentDocument, view = frame.contentWindow;
  const marked = [...page.querySelectorAll(%s)].map(element => {
    const box = element.getBoundingClientRect();
    return [element.innerText, box.bottom <= view.innerHeight && box.right <= view.innerWidth];
  });
  document.getElementById("probed").textContent = JSON.stringify({
    marked: marked, page_width: page.documentElement.scrollWidth});
};
frame.src = %s;
</script></body></html>
"""


def first_screen(path: Path, scratch: Path, selector: str = "h1", width: int = 1280,
                 height: int = 800) -> dict:
    """The page at `path` in a frame of width x height CSS pixels: `marked`, each element
    matching the CSS `selector` as [its text, wholly on the first screen]; `page_width`, the
    page's scroll width (over `width`: it scrolls sideways)."""
    page = scratch / f"screen-{path.stem}.html"
    page.write_text(SCREEN % (width, height, json.dumps(selector),
                              json.dumps(path.resolve().as_uri())))
    flags = [f"--window-size={width},{height + 200}", "--virtual-time-budget=10000"]
    return rendered_probe(page, flags, timeout=120)


SECTIONS = """function look(page, url) {
  const id = decodeURIComponent(url.split("#")[1] || ""), target = page.getElementById(id);
  if (!target) return {missing: id};
  const section = target.closest("section, details") || target;
  return {
    text: section.innerText,
    images: [...section.querySelectorAll("img")].map(
      i => [i.src, i.complete ? i.naturalWidth : 0]),
    links: [...section.querySelectorAll("a[href]")].map(a => a.href)};
}"""


def sections(urls: list[str], scratch: Path) -> dict[str, dict]:
    """For each file URL with a #fragment: what the section (or <details>) holding that element
    shows, as Chromium rendered the page: its text, its images with their natural width (0: not
    loaded), its links as resolved; {"missing": id} where the page has no such element."""
    page = scratch / "sections.html"
    page.write_text(FRAMES % (json.dumps(urls), SECTIONS))
    return rendered_probe(page, ["--virtual-time-budget=30000"], timeout=300)
