"""The site builds strictly, and a real browser (Debian's headless Chromium) opens it cleanly.

The front page, a guide and an API reference page are opened from a server on 127.0.0.1:
no console error, every image drawn, every link on the page answering, no request leaving
loopback (fonts, scripts and diagrams all come from the site), and search finds a page.

Every page is then read at a desktop's and a laptop's width (``WIDTHS``): no code block or table
wider than the column (a reader would have to scroll sideways to see a line's end), no table
with an empty header row, no diagram whose smallest text is drawn under ``MIN_DIAGRAM_TEXT_PX``.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest

from tests.docs import pages

pytestmark = pytest.mark.xdist_group("docs-site")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
PAGES = ["", "ml/deploy/", "reference/api/modeldeployment/"]
WIDTHS = (1400, 1280)  # px: a desktop browser window, a 13-inch laptop's
MIN_DIAGRAM_TEXT_PX = 12

# What does not fit on the page open in the browser, as short lines naming each offender. A code
# block or table is too wide when its box scrolls (Material lets both scroll sideways); a diagram
# reports its drawn width, the text size is worked out from its SVG (_diagram_text).
_LAYOUT_PROBE = """
const out = {code: [], tables: [], headless: [], diagrams: []};
const first = t => t.trim().split('\\n')[0].slice(0, 70);
for (const code of document.querySelectorAll('.md-content pre > code')) {
  if (code.scrollWidth > code.clientWidth + 1) out.code.push(first(code.textContent));
}
for (const table of document.querySelectorAll('.md-content table')) {
  const box = table.closest('.md-typeset__scrollwrap') || table;
  if (box.scrollWidth > box.clientWidth + 1 || table.scrollWidth > table.clientWidth + 1)
    out.tables.push(first(table.textContent));
  const heads = Array.from(table.querySelectorAll('thead th'));
  if (heads.length && heads.every(th => th.textContent.trim() === '')) out.headless.push(first(table.textContent));
}
for (const img of document.querySelectorAll('.md-content img[src$=".svg"]')) {
  out.diagrams.push([new URL(img.src).pathname, img.getBoundingClientRect().width]);
}
return out;
"""


def build(target: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([str(pages.ROOT / ".venv" / "bin" / "mkdocs"), "build", "--strict", "-d", str(target)],
                          cwd=pages.ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    done = build(target)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return target


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists(), \
        "Debian's chromium and chromium-driver are needed: hack/docs-packages.sh test"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def test_strict_build_writes_every_page(site):
    for page in pages.pages():
        if page.name.endswith(".md"):
            html = page.name[:-3] + ("/index.html" if not page.name.endswith("index.md") else ".html")
            assert (site / html).is_file(), f"{page.name} was not built ({html})"
    assert (site / "search" / "search_index.json").is_file(), "the offline search index"
    assert list((site / "diagrams").glob("*.svg")), "diagrams are rendered at build time"


def test_output_blocks_are_drawn_as_output(site):
    # The site's rule (lib/modelplane/dev/codeblocks.py) and the command runner's (pages.runnable)
    # must agree on which text blocks are output, or a page would draw a command's output as code.
    drawn = sum(html.read_text(encoding="utf-8").count('highlight output"') for html in site.rglob("*.html"))
    checked = sum(1 for page in pages.pages() for _, output in page.runnable() if output is not None)
    assert checked > 50, "the pages show almost no output: the runner's rule is broken, not the site"
    assert drawn == checked


def test_no_page_loads_anything_from_the_network(site):
    offenders = []
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        for marker in ("fonts.googleapis", "fonts.gstatic", "unpkg.com", "cdn.jsdelivr", "cdnjs."):
            if marker in text:
                offenders.append(f"{html.relative_to(site)}: {marker}")
    assert offenders == []


def _links(driver) -> list[str]:
    return driver.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")


def _answers(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.mark.parametrize("path", PAGES)
def test_page_opens_cleanly_in_a_real_browser(browser, served, path):
    browser.get(served + path)
    browser.execute_script("return document.readyState")
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], f"console errors on /{path}: {errors}"
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    assert broken == [], f"broken images on /{path}"
    origin = urlparse(served)
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(r => r.name)")
    foreign = [r for r in resources if urlparse(r).netloc != origin.netloc and not r.startswith("data:")]
    assert foreign == [], f"/{path} requested something off this machine: {foreign}"
    dead = []
    for link in sorted(set(_links(browser))):
        url, _ = urldefrag(link)
        if urlparse(url).netloc == origin.netloc and _answers(url) != 200:
            dead.append(link)
    assert dead == [], f"/{path} links to pages that do not answer"


def _site_pages(site: Path) -> list[str]:
    """Every page of the built site, as a path below its root."""
    found = sorted(p.parent.relative_to(site).as_posix() for p in site.rglob("index.html"))
    return ["" if p == "." else p + "/" for p in found if not p.startswith("search")]


@functools.cache
def _diagram_text(svg: Path) -> tuple[float, float]:
    """(smallest font size of the drawing's text, width of its viewBox), in the SVG's own units."""
    root = ET.parse(svg).getroot()
    sizes = [float(t.get("font-size")) for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("font-size")]
    return min(sizes), float(root.get("viewBox").split()[2])


def _layout_problems(browser, site: Path, url: str, path: str) -> list[str]:
    browser.get(url + path)
    found = browser.execute_script(_LAYOUT_PROBE)
    out = [f"/{path}: code block wider than the column: {c!r}" for c in found["code"]]
    out += [f"/{path}: table wider than the column: {t!r}" for t in found["tables"]]
    out += [f"/{path}: table with an empty header row: {t!r}" for t in found["headless"]]
    for src, drawn in found["diagrams"]:
        size, width = _diagram_text(site / src.lstrip("/"))
        if size * drawn / width < MIN_DIAGRAM_TEXT_PX:
            out.append(f"{src} on /{path}: text drawn at {size * drawn / width:.1f} px, under "
                       f"{MIN_DIAGRAM_TEXT_PX}: a larger fontsize or a narrower layout in its .dot")
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_its_column(browser, site, served, width):
    before = browser.get_window_size()
    browser.set_window_size(width, 900)
    paths = _site_pages(site)
    assert len(paths) > 50, "the walk over the built site found almost no pages"
    try:
        problems = [p for path in paths for p in _layout_problems(browser, site, served, path)]
    finally:
        # The browser is shared: the search test clicks the search icon, drawn only when the
        # window is narrow (at these widths the search box shows instead).
        browser.set_window_size(before["width"], before["height"])
    assert problems == [], f"at {width} px:\n" + "\n".join(problems)


def test_the_layout_probe_sees_what_does_not_fit(browser, tmp_path):
    # The same probe on a page built to fail every check: a test that finds nothing proves
    # nothing unless it would find these.
    page = tmp_path / "bad" / "index.html"
    page.parent.mkdir()
    page.write_text(
        '<div class="md-content" style="width:300px">'
        '<pre><code style="display:block;overflow:auto;white-space:pre">' + "x" * 200 + "</code></pre>"
        '<table><thead><tr><th></th><th> </th></tr></thead><tbody><tr><td>a</td><td>b</td></tr></tbody></table>'
        '<img src="/d.svg" style="width:150px"></div>', encoding="utf-8")
    (tmp_path / "d.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="600pt" height="50pt" viewBox="0 0 600 50">'
        '<text font-size="12.00">tiny</text></svg>', encoding="utf-8")
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        problems = _layout_problems(browser, tmp_path, f"http://127.0.0.1:{server.server_address[1]}/", "bad/")
    finally:
        server.shutdown()
        server.server_close()
    assert [p.split(":")[1].strip() for p in problems] == [
        "code block wider than the column", "table with an empty header row", "text drawn at 3.0 px, under 12"], problems


def test_search_works_offline(browser, served):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served)
    browser.find_element(By.CSS_SELECTOR, "label[for='__search']").click()
    box = WebDriverWait(browser, 20).until(ready.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.send_keys("scheduler")
    hits = WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item") or None)
    assert hits, "search found nothing for 'scheduler'"


def test_readme_links_resolve():
    import re

    readme = (pages.ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme) if "://" not in t]
    assert targets, "the README links the site's parts"
    assert [t for t in targets if not (pages.ROOT / t).is_file()] == []
    nav = (pages.ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [t for t in targets if t.startswith("docs/") and t.removeprefix("docs/") not in nav] == []
