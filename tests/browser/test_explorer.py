#!/usr/bin/python3
"""The attention explorer in a real browser (ctest browser.explorer): attn-serve's page at / and
attn-dump-attention --html's file, driven in headless Chromium by Selenium.

  test_explorer.py BIN_DIR WORK_DIR

On a tiny run trained here: the page loads with no console error or failed request; its
translation is attn-translate's; the focused heatmap's cells (README.md's contract: #heatmap
cells with data-query, data-key, data-weight) hold attn-dump-attention's CSV weights, free and
forced, and the page's CSV of all heads is the dump's rows; hovering a cell highlights its row
and column; the Run view's curves hold train.log.jsonl's points; the --html file shows the same
numbers from file://; axe-core finds no serious or critical violation. Screenshots of each view
go to WORK_DIR/screenshots. Exit 77 (a ctest skip) without Chromium, its driver or Selenium,
or when axe-core cannot be installed (npm) and the rest passed."""
import csv
import io
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explorer_fixture as fixture  # noqa: E402

AXE_VERSION = "4.10.2"
SKIP = 77
TOLERANCE = 1e-6


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait(driver, predicate, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception:  # the page may be mid-update
            pass
        time.sleep(0.1)
    raise Failure("timed out waiting for " + what + "\nconsole: " + json.dumps(driver.get_log("browser")))


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def dump_csv(bin_dir, run, work, source, target=None, beam=None):
    """attn-dump-attention's rows for one line: (kind, layer, head, q, k) -> (weight text, q token, k token)."""
    src = os.path.join(work, "pair.src")
    fixture.write_lines(src, [source])
    command = [os.path.join(bin_dir, "attn-dump-attention"), "--model", run, "--src", src]
    if target is not None:
        tgt = os.path.join(work, "pair.tgt")
        fixture.write_lines(tgt, [target])
        command += ["--tgt", tgt]
    if beam is not None:
        command += ["--beam", str(beam)]
    text = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rows = {}
    for row in csv.DictReader(io.StringIO(text)):
        rows[(row["kind"], int(row["layer"]), row["head"], int(row["query_pos"]), int(row["key_pos"]))] = (
            row["weight"], row["query_token"], row["key_token"])
    return text, rows


def select(driver, element_id, value):
    from selenium.webdriver.support.ui import Select
    Select(driver.find_element("id", element_id)).select_by_value(str(value))


def heatmap_cells(driver):
    """The focused heatmap's cells: (query, key) -> data-weight text, read in one script call."""
    cells = driver.execute_script(
        "return Array.from(document.querySelectorAll('#heatmap rect.cell'), c => "
        "[Number(c.dataset.query), Number(c.dataset.key), c.dataset.weight]);")
    return {(q, k): w for q, k, w in cells}


def check_cells_equal_dump(driver, rows, kind, layer, head, what):
    select(driver, "kind", kind)
    select(driver, "layer", layer)
    select(driver, "head", head)
    cells = heatmap_cells(driver)
    expected = {(q, k): w for (kd, ly, hd, q, k), (w, _, _) in rows.items()
                if kd == kind and ly == layer and hd == str(head)}
    check(cells and set(cells) == set(expected),
          "%s: the heatmap's cells %s are not the CSV's %s" % (what, sorted(cells)[:5], sorted(expected)[:5]))
    for key, weight in expected.items():
        check(abs(float(cells[key]) - float(weight)) <= TOLERANCE,
              "%s: cell %s holds %s, the CSV %s" % (what, key, cells[key], weight))


def screenshot(driver, work, name):
    folder = os.path.join(work, "screenshots")
    os.makedirs(folder, exist_ok=True)
    driver.save_screenshot(os.path.join(folder, name + ".png"))


def check_translation(driver, server, bin_dir, run, work, line):
    driver.find_element("id", "source").send_keys(line)
    driver.find_element("id", "translate").click()
    # A tiny model's translation may be empty: the answer's lines are there all the same.
    wait(driver, lambda: driver.find_elements("css selector", "#translation .line"), "a translation")
    shown = driver.find_element("id", "translation").text.strip()
    src = os.path.join(work, "line.src")
    fixture.write_lines(src, [line])
    expected = subprocess.run([os.path.join(bin_dir, "attn-translate"), "--model", run, "--quiet", "--input", src],
                              check=True, capture_output=True, text=True).stdout.strip()
    check(shown == expected, "the page translates %r as %r, attn-translate as %r" % (line, shown, expected))
    check(driver.find_elements("css selector", "#alternatives li"), "no alternatives are shown")
    screenshot(driver, work, "translate")


def check_attention(driver, bin_dir, run, work, line):
    """Free mode: the model's own translation, as attn-dump-attention --beam 2 (the run's beam)."""
    driver.find_element("id", "explore").click()
    wait(driver, lambda: driver.find_elements("css selector", "#heatmap rect.cell"), "the heatmap")
    text, rows = dump_csv(bin_dir, run, work, line, beam=2)
    check_cells_equal_dump(driver, rows, "cross", 1, 1, "free mode, cross layer 1 head 1")
    check_cells_equal_dump(driver, rows, "enc_self", 0, 0, "free mode, enc_self layer 0 head 0")
    page_csv = driver.execute_script("return window.attnExplorer.viewCsv('overview');")
    check(page_csv == text, "the page's CSV of all heads is not attn-dump-attention's:\n%s\n---\n%s"
          % (page_csv[:400], text[:400]))
    check_hover(driver)
    check_keyboard(driver)
    select(driver, "kind", "cross")
    screenshot(driver, work, "attention-free")


def check_hover(driver):
    from selenium.webdriver.common.action_chains import ActionChains
    cell = driver.find_elements("css selector", "#heatmap rect.cell")[-1]
    ActionChains(driver).move_to_element(cell).perform()
    heatmap = driver.find_element("id", "heatmap")
    wait(driver, lambda: heatmap.get_attribute("data-active-query") == cell.get_attribute("data-query")
         and heatmap.get_attribute("data-active-key") == cell.get_attribute("data-key"), "the hover's highlight")
    check(driver.find_element("id", "hl-row").get_attribute("visibility") == "visible", "the row is not highlighted")
    check(cell.get_attribute("data-weight") in driver.find_element("id", "details").text,
          "the hovered cell's exact weight is not shown")
    active = driver.find_elements("css selector", "#heatmap text.tok.active")
    check(len(active) == 2, "hovering a cell marks %d token labels, not its query and key" % len(active))


def check_keyboard(driver):
    from selenium.webdriver.common.keys import Keys
    heatmap = driver.find_element("id", "heatmap")
    driver.execute_script("arguments[0].focus();", heatmap)
    heatmap.send_keys(Keys.ARROW_DOWN, Keys.ARROW_RIGHT)
    wait(driver, lambda: heatmap.get_attribute("data-active-query") == "1"
         and heatmap.get_attribute("data-active-key") == "1", "the keyboard cursor at cell (1, 1)")


def check_forced(driver, bin_dir, run, work, line, target):
    driver.find_element("id", "target").send_keys(target)
    driver.find_element("id", "explore").click()
    wait(driver, lambda: "forced" in driver.find_element("id", "pair-text").text, "the forced pair")
    _, rows = dump_csv(bin_dir, run, work, line, target=target)
    check_cells_equal_dump(driver, rows, "cross", 0, 0, "forced mode, cross layer 0 head 0")
    check_cells_equal_dump(driver, rows, "dec_self", 1, 1, "forced mode, dec_self layer 1 head 1")
    select(driver, "head", "mean")
    check(heatmap_cells(driver), "the mean of the heads shows no cells")
    select(driver, "units", "words")
    words = len(target.split()) + 1  # and </s>
    rows_shown = len({q for q, _ in heatmap_cells(driver)})
    check(rows_shown == words, "in words the target has %d rows, not %d" % (rows_shown, words))
    select(driver, "units", "pieces")
    buttons = driver.find_elements("css selector", "button.thumb")
    check(len(buttons) == 3 + 6 + 6, "the overview holds %d thumbnails" % len(buttons))
    buttons[0].click()
    check(driver.find_element("id", "kind").get_attribute("value") == "enc_self", "a thumbnail does not focus its map")
    buttons[3].click()  # cross, layer 0, head 0: the picture of README.md
    driver.execute_script("document.getElementById('tabs').scrollIntoView();")
    screenshot(driver, work, "attention")


def check_run(driver, run, work):
    driver.find_element("id", "tab-run").click()
    wait(driver, lambda: driver.find_elements("css selector", "#charts circle"), "the run's curves")
    shown = driver.execute_script(
        "return Array.from(document.querySelectorAll('#charts circle'), c => "
        "[c.dataset.series, Number(c.dataset.step), Number(c.dataset.value)]);")
    with open(os.path.join(run, "train.log.jsonl")) as f:
        records = [json.loads(line) for line in f]
    for series in ("train.loss", "train.ppl", "train.lr", "train.tokens_per_s", "train.rss_mb", "valid.loss",
                   "valid.bleu", "valid.chrf"):
        kind, field = series.split(".")
        expected = sorted((r["step"], r[field]) for r in records if r["type"] == kind)
        got = sorted((step, value) for name, step, value in shown if name == series)
        check(len(got) == len(expected) and all(a[0] == b[0] and abs(a[1] - b[1]) <= 1e-9 * max(1, abs(b[1]))
                                                for a, b in zip(got, expected)),
              "the %s curve holds %s, the log %s" % (series, got, expected))
    check('"max_steps"' in driver.find_element("id", "config").text, "the run's config is not shown")
    screenshot(driver, work, "run")


def check_export(driver, bin_dir, run, work, line, target):
    page = os.path.join(work, "export.html")
    src, tgt = os.path.join(work, "pair.src"), os.path.join(work, "pair.tgt")
    fixture.write_lines(src, [line])
    fixture.write_lines(tgt, [target])
    subprocess.run([os.path.join(bin_dir, "attn-dump-attention"), "--model", run, "--src", src, "--tgt", tgt,
                    "--html", page], check=True, capture_output=True)
    driver.get("file://" + page)
    wait(driver, lambda: driver.find_elements("css selector", "#heatmap rect.cell"), "the exported heatmap")
    _, rows = dump_csv(bin_dir, run, work, line, target=target)
    check_cells_equal_dump(driver, rows, "cross", 1, 0, "the --html file, cross layer 1 head 0")
    check(not console_errors(driver), "the --html file logs errors: %s" % console_errors(driver))
    screenshot(driver, work, "export")


def install_axe(work):
    """axe.min.js of axe-core AXE_VERSION, installed by npm into a cache under the build tree; None
    when npm cannot."""
    prefix = os.path.join(work, "..", "npm-cache")
    script = os.path.join(prefix, "node_modules", "axe-core", "axe.min.js")
    if not os.path.exists(script):
        try:
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix,
                            "axe-core@" + AXE_VERSION], check=True, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as error:
            print("axe-core could not be installed: %s" % error)
            return None
    with open(script) as f:
        return f.read()


def check_axe(driver, axe, view):
    """axe-core on the page as it is: serious and critical violations fail."""
    driver.execute_script(axe)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations), e => done(String(e)));")
    check(isinstance(result, list), "axe-core failed: %s" % result)
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in result
           if v["impact"] in ("serious", "critical")]
    check(not bad, "axe-core finds serious or critical violations in the %s view: %s" % (view, bad))


def run_checks(driver, server, bin_dir, run, work, axe):
    src, tgt = fixture.synthetic_corpus(20, 2)
    line, target = src[3], tgt[3]
    driver.get(server.url + "/")
    wait(driver, lambda: driver.find_element("id", "model-name").text, "the page's settings")
    check_translation(driver, server, bin_dir, run, work, line)
    if axe: check_axe(driver, axe, "translation")
    check_attention(driver, bin_dir, run, work, line)
    check_forced(driver, bin_dir, run, work, line, target)
    if axe: check_axe(driver, axe, "attention")
    check_run(driver, run, work)
    if axe: check_axe(driver, axe, "run")
    check(not console_errors(driver), "the page logs errors: %s" % console_errors(driver))
    check_export(driver, bin_dir, run, work, line, target)
    if axe: check_axe(driver, axe, "exported")


def main():
    bin_dir, work = sys.argv[1], os.path.abspath(sys.argv[2])
    missing = fixture.browser_missing()
    if missing:
        print("SKIP: " + missing)
        return SKIP
    os.makedirs(work, exist_ok=True)
    axe = install_axe(work)
    run = fixture.train_tiny_run(bin_dir, os.path.join(work, "tiny"))
    server = fixture.Server(bin_dir, run, work)
    driver = fixture.chromium()
    try:
        run_checks(driver, server, bin_dir, run, work, axe)
    except Failure as failure:
        print("FAIL: %s" % failure)
        screenshot(driver, work, "failure")
        return 1
    finally:
        driver.quit()
        server.stop()
    if not axe:
        print("SKIP: every check passed but the accessibility one: axe-core %s could not be installed" % AXE_VERSION)
        return SKIP
    print("ok: screenshots in %s" % os.path.join(work, "screenshots"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
