"""The web table in a real browser: headless Chromium (Debian's chromium and
chromium-driver) driven by Selenium plays a hand to the end by clicking and steps through a
replay; screenshots are saved as test artifacts (``$GOSTOP_TEST_ARTIFACTS``, default
``test-artifacts/``).

Without Chromium or Selenium the tests skip, except where ``GOSTOP_BROWSER_TESTS=1`` (as
``.ci/run`` sets, after installing both): there a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

REQUIRED = os.environ.get("GOSTOP_BROWSER_TESTS") == "1"
ARTIFACTS = Path(os.environ.get("GOSTOP_TEST_ARTIFACTS", "test-artifacts"))
CHROMIUM_ARGUMENTS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage")
WINDOW = "--window-size=1280,1800"
WAIT_SECONDS = 60  # a page's answer on a loaded 2-core machine; a few hundred ms when idle


def _need(present: bool, why: str) -> None:
    if not present:
        if REQUIRED:
            pytest.fail(f"{why} (GOSTOP_BROWSER_TESTS=1: the browser tests must run here)")
        pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    _need(shutil.which("chromium") is not None and shutil.which("chromedriver") is not None, "no chromium/chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ModuleNotFoundError:
        _need(False, "selenium is not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in (*CHROMIUM_ARGUMENTS, WINDOW):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("uvicorn")
    import uvicorn

    from gostop.train.table import TableGame, create_app
    from gostop_env.core import Rules

    replays = tmp_path_factory.mktemp("replays")
    game = TableGame(Rules(), "greedy", 8, 0)
    while not game.done:
        game.move(game.batch.legal_actions(0)[0])
    (replays / "hand.json").write_text(json.dumps({"format": "gostop-replay/1", **game.state()["replay"]}))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app("greedy", replays, port=port)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    for _ in range(200):
        if running.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/", game.state()
    running.should_exit = True
    thread.join(timeout=10)


def _screenshot(driver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / name))
    assert (ARTIFACTS / name).stat().st_size > 10_000


def test_a_hand_played_to_the_end_by_clicking(browser, server):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC  # noqa: N812
    from selenium.webdriver.support.ui import WebDriverWait

    url, _ = server
    browser.get(url)
    browser.find_element(By.ID, "seed").send_keys("11")
    browser.find_element(By.ID, "new-hand").click()
    wait = WebDriverWait(browser, WAIT_SECONDS)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move") or d.find_element(By.ID, "done").text)
    assert browser.find_element(By.CSS_SELECTOR, "#table svg")
    clicks, deadline = 0, time.time() + 120
    while not browser.find_element(By.ID, "done").text and time.time() < deadline:
        buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
        if not buttons:
            time.sleep(0.05)
            continue
        try:
            buttons[0].click()
        except StaleElementReferenceException:
            continue
        wait.until(EC.staleness_of(buttons[0]))
        clicks += 1
    done = browser.find_element(By.ID, "done").text
    assert clicks > 0 and done.startswith("Payments:") and browser.find_element(By.ID, "error").text == ""
    wait.until(lambda d: d.execute_script("return document.getAnimations().length") == 0)
    assert _card_layout_problems(browser) == []
    _screenshot(browser, "table.png")


def _open_the_replay(browser, server):
    """The server's replay opened at step 0 in the viewer: (the hand's state, a waiter)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, state = server
    browser.get(url)
    browser.find_element(By.ID, "show-replays").click()
    wait = WebDriverWait(browser, WAIT_SECONDS)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-list a"))
    browser.find_element(By.CSS_SELECTOR, "#replay-list a").click()
    wait.until(lambda d: "step 0 of" in d.find_element(By.ID, "step").text)
    return state, wait


def test_a_replay_stepped_to_the_end(browser, server):
    from selenium.webdriver.common.by import By

    state, wait = _open_the_replay(browser, server)
    steps = len(state["replay"]["actions"])
    for k in range(1, steps + 1):
        browser.find_element(By.ID, "next").click()
        wait.until(lambda d, k=k: f"step {k} of {steps}" in d.find_element(By.ID, "step").text)
    payments = ", ".join(str(p) for p in state["payments"])
    assert browser.find_element(By.ID, "replay-done").text.startswith(f"Payments: {payments}")
    _screenshot(browser, "replay.png")


VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844), "wide": (1920, 1080)}


def _in_view(driver, element) -> bool:
    """Whether ``element`` is shown and lies wholly inside the viewport, as the page stands."""
    return driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0"
        " && r.bottom <= window.innerHeight && r.right <= window.innerWidth;",
        element,
    )


@pytest.fixture
def viewport(browser, request):
    width, height = VIEWPORTS[request.param]
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    yield request.param
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.mark.parametrize("viewport", list(VIEWPORTS), indirect=True)
@pytest.mark.parametrize("players", [2, 3])
def test_moves_and_errors_stay_in_view(browser, server, viewport, players):
    """The landing page deals a hand at once; at 1280x900, 390x844 and 1920x1080, with 2 and
    3 players, every move button lies inside the viewport with no scrolling, no card is
    clipped or overlaps another group's, and a refused new hand shows its error inside the
    viewport and leaves the table as it was."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    url, _ = server
    browser.get(url)
    wait = WebDriverWait(browser, WAIT_SECONDS)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#table svg"))  # a hand dealt with no click
    # A seeded hand for the checks (a random one can end at the deal, with no move to offer).
    Select(browser.find_element(By.ID, "players")).select_by_visible_text(str(players))
    browser.find_element(By.ID, "seed").send_keys("11")
    table = browser.find_element(By.ID, "table").get_attribute("innerHTML")
    browser.find_element(By.ID, "new-hand").click()
    wait.until(lambda d: d.find_element(By.ID, "table").get_attribute("innerHTML") != table)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
    browser.execute_script("window.scrollTo(0, 0)")
    buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
    wait.until(lambda d: d.execute_script("return document.getAnimations().length") == 0)
    _screenshot(browser, f"table-{viewport}-{players}p.png")
    outside = [b.text for b in buttons if not _in_view(browser, b)]
    assert buttons and not outside, f"move buttons outside the viewport: {outside}"
    assert _card_layout_problems(browser) == []

    table = browser.find_element(By.ID, "table").get_attribute("innerHTML")
    opponent = browser.find_element(By.ID, "opponent")
    opponent.clear()
    opponent.send_keys("no-such-agent")
    browser.find_element(By.ID, "new-hand").click()
    wait.until(lambda d: d.find_element(By.ID, "error").text)
    error = browser.find_element(By.ID, "error")
    assert "one of this table's agents" in error.text and _in_view(browser, error)
    assert browser.find_element(By.ID, "table").get_attribute("innerHTML") == table
    _screenshot(browser, f"error-{viewport}-{players}p.png")


CARD_LAYOUT = """
const svg = document.querySelector("#table svg").getBoundingClientRect();
const cards = [...document.querySelectorAll("#table g.card")].map((g) => {
  const r = g.getBoundingClientRect();
  return {name: g.querySelector("title").textContent, group: g.dataset.group, r};
});
const problems = [];
if (svg.left < 0 || svg.right > window.innerWidth + 0.5) problems.push("the table is wider than the viewport");
const inside = (r) => r.left >= svg.left - 0.5 && r.right <= svg.right + 0.5
                    && r.top >= svg.top - 0.5 && r.bottom <= svg.bottom + 0.5;
for (const c of cards) {
  if (!inside(c.r)) problems.push(`${c.name} (${c.group}) clipped by the table's edge`);
}
for (let i = 0; i < cards.length; i++) for (let j = i + 1; j < cards.length; j++) {
  const [a, b] = [cards[i], cards[j]];
  const overlap = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left) > 0.5
               && Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top) > 0.5;
  if (overlap && a.group !== b.group) problems.push(`${a.name} (${a.group}) over ${b.name} (${b.group})`);
}
return problems;
"""


def _card_layout_problems(driver) -> list[str]:
    """What the browser shows wrong with the cards of the table as drawn: a card outside the
    table's picture, two cards of different groups overlapping (cards overlap only when
    fanned within one pile), or a table wider than the viewport."""
    return driver.execute_script(CARD_LAYOUT)


def test_moves_animate_and_the_setting_turns_that_off(browser, server):
    """With animation on (the default), a move slides the cards that moved; switched off, the
    choice is remembered across a reload and the next move moves nothing."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, _ = server
    browser.get(url)
    browser.execute_script("localStorage.clear()")
    browser.get(url)
    wait = WebDriverWait(browser, WAIT_SECONDS)

    def a_move_on_a_seeded_hand() -> int:
        table = browser.find_element(By.ID, "table").get_attribute("innerHTML")
        seed = browser.find_element(By.ID, "seed")
        seed.clear()
        seed.send_keys("11")
        browser.find_element(By.ID, "new-hand").click()
        wait.until(lambda d: d.find_element(By.ID, "table").get_attribute("innerHTML") != table)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
        table = browser.find_element(By.ID, "table").get_attribute("innerHTML")
        browser.find_elements(By.CSS_SELECTOR, "#moves button.move")[0].click()
        wait.until(lambda d: d.find_element(By.ID, "table").get_attribute("innerHTML") != table)
        return int(browser.execute_script("return document.body.dataset.animated"))

    assert browser.find_element(By.ID, "animate").is_selected()
    assert a_move_on_a_seeded_hand() > 0
    browser.find_element(By.ID, "animate").click()
    browser.get(url)
    assert not browser.find_element(By.ID, "animate").is_selected()
    assert a_move_on_a_seeded_hand() == 0
    assert browser.execute_script("return document.getAnimations().length") == 0
    browser.execute_script("localStorage.clear()")


def test_the_card_gallery_shows_every_card_named(browser, server):
    from selenium.webdriver.common.by import By

    url, _ = server
    browser.get(url + "cards")
    images = browser.find_elements(By.CSS_SELECTOR, "figure img")
    assert len(images) == 51
    assert all(browser.execute_script("return arguments[0].naturalWidth", img) > 0 for img in images)
    captions = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "figcaption")]
    assert captions[0] == "Jan pine crane" and captions[-1] == "face down"
    _screenshot(browser, "cards.png")


def test_a_replay_stepped_by_turn_and_jumped_to_its_end(browser, server):
    from selenium.webdriver.common.by import By

    state, wait = _open_the_replay(browser, server)
    steps = len(state["replay"]["actions"])
    seen = [0]
    while seen[-1] < steps:
        browser.find_element(By.ID, "next-turn").click()
        wait.until(lambda d: f"step {seen[-1]} of" not in d.find_element(By.ID, "step").text)
        seen.append(int(browser.find_element(By.ID, "step").text.split("step ")[1].split(" of")[0]))
    assert 2 < len(seen) < steps + 1  # turns hold several moves: fewer clicks than moves
    browser.find_element(By.ID, "first").click()
    wait.until(lambda d: "step 0 of" in d.find_element(By.ID, "step").text)
    browser.find_element(By.ID, "last").click()
    wait.until(lambda d: f"step {steps} of {steps}" in d.find_element(By.ID, "step").text)
    assert browser.find_element(By.ID, "replay-done").text.startswith("Payments:")
