"""serve_page.py BROWSER PORT PROFILE SHOT PID_FILE: nmt serve's page (on 127.0.0.1:PORT) used in
headless Chromium as a person would, through the DevTools protocol (cdp.py), and checked against
the API's answers for the same texts and options (standard library only).

  1. open the page (no text in the address): nothing translated yet;
  2. click the text box and type a sentence key by key, then pause: the page translates it; the
     translation, the n-best list (texts, scores) and the heat map (labels, one cell per pair,
     each shaded by its weight over its row's largest) are the API's;
  3. hover a cell and a source word, leave the map, hover an output word: exactly the labels and
     cells the page should highlight are highlighted (by class and as drawn), the word links
     being the API's alignment, itself the largest weight of each attention row; the screenshot
     (SHOT) is taken while an output word is hovered;
  4. click the second hypothesis of the n-best list: the heat map becomes its attention;
  5. select all, type another sentence and press Enter: it is translated and Enter is not typed;
  6. open a link with a sentence in it (#text=...): it is translated on load.

Prints 'ok NAME' or 'FAIL NAME: why' per check; exits 1 after any failure. Every wait is bounded;
the browser is killed on the way out, also on SIGTERM.
"""
import base64
import json
import os
import signal
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, CdpError  # noqa: E402
from serve_client import request  # noqa: E402

TYPED = "Two dogs are playing in the snow."
ENTERED = "A man rides a bike."
LINKED = "A girl is reading a book."
WAIT = 20  # seconds for a translation to show

# What the page shows, read from its DOM and computed styles. `look` is what a person sees of
# the highlight: a label drawn in the highlight colour, a cell outlined in it.
STATE_JS = r"""(() => {
  const $ = (id) => document.getElementById(id), all = (s) => [...document.querySelectorAll(s)];
  const probe = document.createElement("div");
  probe.style.background = "var(--hi)";
  document.body.append(probe);
  const hi = getComputedStyle(probe).backgroundColor;
  probe.remove();
  const kind = (e) => ["cell", "src", "tgt"].find((k) => e.classList.contains(k));
  const key = (e) => kind(e) === "cell" ? ["cell", +e.dataset.i, +e.dataset.j]
                   : kind(e) === "src" ? ["src", +e.dataset.j] : ["tgt", +e.dataset.i];
  const parts = all("#heatmap > .cell, #heatmap > .src, #heatmap > .tgt");
  const seen = (e) => { const s = getComputedStyle(e);
    return kind(e) === "cell" ? s.outlineColor === hi : s.backgroundColor === hi; };
  return {
    value: $("input").value, focused: document.activeElement && document.activeElement.id,
    status: $("status").textContent, best: $("best").textContent,
    out_hidden: $("out-card").hidden, att_hidden: $("att-card").hidden, list_hidden: $("nbest-list").hidden,
    nbest: all("#nbest-list > li").map((li) => ({ text: li.firstChild.firstChild.textContent,
      score: li.querySelector(".score").textContent, sel: li.classList.contains("sel") })),
    src: all("#heatmap > .src").map((e) => e.textContent),
    tgt: all("#heatmap > .tgt").map((e) => e.textContent),
    cells: all("#heatmap > .cell").map((e) => [+e.dataset.i, +e.dataset.j, +e.dataset.w,
      getComputedStyle(e).backgroundColor]),
    hi: parts.filter((e) => e.classList.contains("hi")).map(key),
    look: parts.filter(seen).map(key),
  };
})()"""


class Report:
    def __init__(self):
        self.failed = 0

    def __call__(self, name, errors):
        if errors:
            self.failed += 1
            print(f"FAIL {name}: " + "; ".join(errors))
        else:
            print(f"ok {name}")
        sys.stdout.flush()


def api(port, text, beam, n_best, normalize):
    body = json.dumps({"text": text, "beam": beam, "n_best": n_best, "normalize": normalize,
                       "attention": True, "alignment": True})
    status, data = request(port, "POST", "/translate", "application/json", body.encode(), timeout=30)
    if status != 200:
        raise RuntimeError(f"the API answered {status}: {data[:200]!r}")
    return json.loads(data)["translations"][0]


def alpha(css):
    """The opacity of a computed colour, rgb(...) or rgba(...)."""
    v = css[css.index("(") + 1:css.rindex(")")].replace("/", ",").split(",")
    return float(v[3]) if len(v) == 4 else 1.0


def shown(tr, state, k=0):
    """What differs between the page and the API's answer TR, its hypothesis K selected."""
    e, h = [], tr["hyps"][k]
    att = h["attention"]
    if state["out_hidden"] or state["att_hidden"]:
        e.append("the translation or the heat map is hidden")
    if state["best"].strip() != tr["text"]:
        e.append(f"translation {state['best']!r}, API {tr['text']!r}")
    want = [(y["text"], f"{y['score']:.3f}") for y in tr["hyps"]]
    got = [(y["text"], y["score"]) for y in state["nbest"]]
    if got != want:
        e.append(f"n-best {got}, API {want}")
    if state["list_hidden"] != (len(tr["hyps"]) < 2):
        e.append("the n-best list is " + ("hidden" if state["list_hidden"] else "shown"))
    sel = [i for i, y in enumerate(state["nbest"]) if y["sel"]]
    if sel != [k]:
        e.append(f"selected hypotheses {sel}, expected [{k}]")
    if state["src"] != att["source"]:
        e.append(f"source labels {state['src']}, API {att['source']}")
    if state["tgt"] != att["target"]:
        e.append(f"output labels {state['tgt']}, API {att['target']}")
    pairs = [(i, j) for i, row in enumerate(att["weights"]) for j in range(len(row))]
    if [(c[0], c[1]) for c in state["cells"]] != pairs:
        e.append(f"{len(state['cells'])} cells, API {len(pairs)} weights")
        return e
    bad_w, bad_shade = [], []
    for i, j, w, bg in state["cells"]:
        row = att["weights"][i]
        if abs(w - row[j]) > 1e-9:
            bad_w.append((i, j))
        # drawn at opacity weight / row's largest (1/255 steps of a colour channel, and rounding)
        if abs(alpha(bg) - row[j] / (max(row) or 1)) > 0.01:
            bad_shade.append((i, j, bg))
    if bad_w:
        e.append(f"cell weights differ from the API's at {bad_w[:5]}")
    if bad_shade:
        e.append(f"cells not shaded by weight over the row's largest: {bad_shade[:3]}")
    return e


def wait_state(page, what, ready, timeout=WAIT):
    """The page's state once READY(state) holds; CdpError after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while True:
        s = page.evaluate(STATE_JS)
        if ready(s):
            return s
        if time.monotonic() > deadline:
            raise CdpError(f"{what}: not within {timeout} s; the page shows {s['best']!r}, "
                           f"source {s['src']}, status {s['status']!r}")
        time.sleep(0.1)


def translated(page, tr, text, what):
    """The page's state once it shows an answer for TEXT (its source words), and what in it
    differs from the API's answer TR or from TEXT in the text box."""
    s = wait_state(page, what, lambda s: s["src"] == tr["hyps"][0]["attention"]["source"])
    e = shown(tr, s)
    if s["value"] != text:
        e.append(f"the text box holds {s['value']!r}")
    return s, e


def centre(page, selector):
    """The viewport point at the middle of SELECTOR's element, scrolled into view."""
    r = page.evaluate("""(() => { const e = document.querySelector(%s); if (!e) return null;
        e.scrollIntoView({block: "center", inline: "center"});
        const r = e.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
        return [x, y, e.contains(document.elementFromPoint(x, y))]; })()""" % json.dumps(selector))
    if r is None:
        raise CdpError(f"no element {selector}")
    if not r[2]:
        raise CdpError(f"the middle of {selector} is under another element")
    return r[0], r[1]


def click(page, selector):
    x, y = centre(page, selector)
    page.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    for t in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left", clickCount=1)


def key(page, k, code, vk, text=None, **extra):
    down = dict(type="keyDown" if text else "rawKeyDown", key=k, code=code, windowsVirtualKeyCode=vk, **extra)
    if text:
        down.update(text=text, unmodifiedText=text)
    page.call("Input.dispatchKeyEvent", **down)
    page.call("Input.dispatchKeyEvent", type="keyUp", key=k, code=code, windowsVirtualKeyCode=vk,
              **{n: v for n, v in extra.items() if n == "modifiers"})


def type_text(page, text):
    """TEXT key by key: each character a key down (which inserts it) and a key up."""
    for ch in text:
        key(page, ch, "Key" + ch.upper() if ch.isalpha() else "", ord(ch.upper()) if ch.isalnum() else 0, text=ch)


def links_of(h):
    """The alignment as {output word: source word}."""
    return {int(t): int(s) for s, t in (p.split("-") for p in h["alignment"].split())}


def check_alignment(h):
    """The API's links are each output word's largest attention weight, </s> column aside."""
    att, link, e = h["attention"], links_of(h), []
    n, S = len(h["attention"]["target"]) - h["finished"], len(h["attention"]["source"])
    if sorted(link) != list(range(n)):
        e.append(f"links for output words {sorted(link)}, expected 0..{n - 1}")
    for t, s in link.items():
        row = att["weights"][t][:S - 1]
        if not 0 <= s < S - 1 or row[s] < max(row) - 1e-4:
            e.append(f"output word {t} linked to {s}, its row's largest weight is at {row.index(max(row))}")
    return e


def hover(page, selector, expect, what):
    """Move the mouse onto SELECTOR (None: off the map); the highlighted parts against EXPECT."""
    x, y = centre(page, selector) if selector else (5, 5)
    page.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    norm = lambda parts: sorted(tuple(p) for p in parts)  # noqa: E731
    want = norm(expect)
    try:  # the outline of a cell fades in over a few milliseconds
        s = wait_state(page, what, lambda s: norm(s["hi"]) == want and norm(s["look"]) == want, 3)
    except CdpError:
        s = page.evaluate(STATE_JS)
    e = []
    if norm(s["hi"]) != want:
        e.append(f"{what}: class hi on {norm(s['hi'])}, expected {want}")
    if norm(s["look"]) != want:
        e.append(f"{what}: drawn highlighted {norm(s['look'])}, expected {want}")
    return e


def run(page, port, shot, report):
    base = f"http://127.0.0.1:{port}/"
    page.call("Page.enable")
    page.call("Page.navigate", url=base)
    page.wait_event("Page.loadEventFired", WAIT)
    s = page.evaluate(STATE_JS)
    report("page opens empty", [f"shows {s['best']!r}"] if not (s["out_hidden"] and s["att_hidden"]) else [])
    opts = page.evaluate('[+document.getElementById("beam").value, +document.getElementById("nbest").value, '
                         'document.getElementById("norm").checked]')
    beam, n_best, normalize = opts[0], min(opts[1], opts[0]), opts[2]

    # 2: typed, then a pause
    tr = api(port, TYPED, beam, n_best, normalize)
    att = tr["hyps"][0]["attention"]
    click(page, "#input")
    focused = page.evaluate("document.activeElement.id")
    type_text(page, TYPED)
    s, e = translated(page, tr, TYPED, "the typed sentence's translation")
    if focused != "input":
        e.append(f"a click on the text box focused {focused!r}")
    if f"beam {beam}" not in s["status"] or "ms" not in s["status"]:
        e.append(f"status line {s['status']!r}")
    report("typed sentence translated as the API does", e)

    # 3: hovering
    h = tr["hyps"][0]
    report("API links are the attention's largest weights", check_alignment(h))
    link, n, S = links_of(h), len(att["target"]) - h["finished"], len(att["source"])
    i = n // 2
    j = (link[i] + 1) % S
    report("hover a cell", hover(page, f'#heatmap > .cell[data-i="{i}"][data-j="{j}"]',
                                 [("cell", i, j), ("tgt", i), ("src", j)], f"cell ({i}, {j})"))
    by_src = {}
    for t, s_ in sorted(link.items()):
        by_src.setdefault(s_, []).append(t)
    j = max(sorted(by_src), key=lambda s_: len(by_src[s_]))  # the source word most linked to
    want = [("src", j)] + [("tgt", t) for t in by_src[j]] + [("cell", t, j) for t in by_src[j]]
    report("hover a source word", hover(page, f'#heatmap > .src[data-j="{j}"]', want,
                                        f"source word {j} {att['source'][j]!r}"))
    report("leave the heat map", hover(page, None, [], "mouse off the map"))
    i = next((t for t in range(n) if link[t] != t), 0)
    report("hover an output word", hover(page, f'#heatmap > .tgt[data-i="{i}"]',
                                         [("tgt", i), ("src", link[i]), ("cell", i, link[i])],
                                         f"output word {i} {att['target'][i]!r}"))
    png = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
    with open(shot, "wb") as f:
        f.write(png)
    report("screenshot", [] if png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10000 else
           [f"{len(png)} bytes, not a PNG of the page"])

    # 4: another hypothesis of the n-best list
    if len(tr["hyps"]) < 2:
        raise CdpError(f"the API gave {len(tr['hyps'])} hypotheses for n-best {n_best}")
    click(page, "#nbest-list > li:nth-child(2)")
    other = tr["hyps"][1]["attention"]
    s = wait_state(page, "the second hypothesis's attention",
                   lambda s: s["tgt"] == other["target"] and s["nbest"][1]["sel"], 5)
    report("click the second hypothesis", shown(tr, s, 1))

    # 5: select all, type over it, Enter
    tr = api(port, ENTERED, beam, n_best, normalize)
    click(page, "#input")  # the click on the list took the focus
    key(page, "a", "KeyA", 65, modifiers=2, commands=["selectAll"])
    type_text(page, ENTERED)
    key(page, "Enter", "Enter", 13, text="\r")  # not typed: a newline would show in the box
    report("sentence typed over the first, Enter",
           translated(page, tr, ENTERED, "the entered sentence's translation")[1])

    # 6: a link that carries a sentence (a fresh load: a new fragment alone does not reload)
    tr = api(port, LINKED, beam, n_best, normalize)
    page.call("Page.navigate", url="about:blank")
    page.wait_event("Page.loadEventFired", WAIT)
    page.call("Page.navigate", url=base + "#text=" + urllib.parse.quote(LINKED))
    page.wait_event("Page.loadEventFired", WAIT)
    report("sentence in the link translated on load",
           translated(page, tr, LINKED, "the linked sentence's translation")[1])


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    exe, port, profile, shot, pid_file = argv
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("killed (SIGTERM)"))
    report = Report()
    log = profile + ".log"
    try:
        with Browser(exe, profile, ["--window-size=1000,1100", "--hide-scrollbars"],
                     log=log, pid_file=pid_file) as b:
            run(b.page(), int(port), shot, report)
    except (CdpError, OSError, RuntimeError, KeyError, ValueError) as e:
        report("browser session", [f"{type(e).__name__}: {e}"])
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                lines = [ln for ln in f if "dbus" not in ln]  # no system bus here: noise
            print("browser log:", "".join(lines[-5:]), end="")
        except OSError:
            pass
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
