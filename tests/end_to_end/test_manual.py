"""The manual (mkdocs.yml, docs/) builds with warnings as errors, its command reference is the
commands' own ``--help``, and every internal link of the built site opens in the system Chromium
(issue 37).

The site is built into a temporary folder with ``mkdocs build --strict`` and served on 127.0.0.1;
Chromium (Playwright driving ``/usr/bin/chromium``, never a downloaded browser) starts at the
home page and follows every link to the same site, page by page: each page must answer 200 and
each ``#anchor`` must name an element of its page. Skips, saying why, where the docs extra
(``pip install -e ".[docs]"``) or Chromium is missing; CI installs both.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from tests.support.paths import REPO_ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=REPO_ROOT, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.mark.slow
def test_the_command_reference_is_the_commands_own_help(site):
    from click.testing import CliRunner

    from statinterp.app.cli import cli

    page = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    for command in ("rank", "find", "ingest", "review", "evaluate"):
        assert f"statinterp {command}" in page
    first_line = CliRunner().invoke(cli, ["rank", "--help"]).output.split("\n\n")[1].strip()
    assert first_line in page


@pytest.mark.slow
def test_every_internal_link_of_the_manual_opens(served):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium); the manual test needs the system one")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    host = urlparse(served).netloc
    seen: set[str] = set()
    anchors: list[tuple[str, str, str]] = []   # (page linking, target page, fragment)
    broken: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            queue = [served + "index.html"]
            ids: dict[str, set[str]] = {}
            while queue:
                url = queue.pop()
                if url in seen:
                    continue
                seen.add(url)
                response = page.goto(url)
                if response is None or response.status != 200:
                    broken.append(f"{url}: {response.status if response else 'no response'}")
                    continue
                if not url.endswith(".html"):
                    continue
                ids[url] = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
                for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
                    target, fragment = urldefrag(urljoin(url, href))
                    if urlparse(target).netloc != host:
                        continue
                    if target.endswith("/"):
                        target += "index.html"
                    if fragment:
                        anchors.append((url, target, fragment))
                    queue.append(target)
        finally:
            browser.close()
    missing_anchors = [f"{source} -> {target}#{fragment}" for source, target, fragment in anchors
                       if target in ids and fragment not in ids[target]]
    assert not broken, broken
    assert not missing_anchors, missing_anchors
    pages = [url for url in seen if url.endswith(".html")]
    assert len(pages) >= 15, sorted(seen)     # every page of the nav was reached
    assert served + "reference/commands.html" in seen and served + "research/reports.html" in seen
