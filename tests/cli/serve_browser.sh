#!/bin/sh
# serve_browser.sh: nmt serve's page in a real browser. Headless Chromium opens the page with a
# sentence in the address (#text=...), the page's script translates it, and the DOM it leaves is
# checked: the translation shown is the API's, the n-best list is there, and the heat map has a
# label per source and output word and a cell per pair, shaded by weight. A screenshot is kept
# as build/serve-page.png. Without Chromium (Debian's `chromium`) the test says so and skips.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
BROWSER=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$BROWSER" ]; then
    echo "serve_browser: SKIPPED: no chromium (scripts/install-deps.sh --test installs it)" >&2
    finish serve_browser
    exit 0
fi
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 16 --hid 16 --att 16 --maxout 8 --vocab 300 \
    --batch 20 --max-updates 600 --threads 1 --optimizer adam --lr 0.01 2> "$T/train.log"
check "model trained" test -s "$T/m.nmt"

. tests/cli/lib_serve.sh
serve_start "$T/log" "$T/m.nmt" --tokenize en --lowercase --normalize-punct --detokenize fr
[ -n "$PORT" ] && ok || bad "server did not start: $(cat "$T/log")"

SENT="Two dogs are playing in the snow."
URL="http://127.0.0.1:$PORT/#text=$(printf '%s' "$SENT" | sed 's/ /%20/g')"
# the browser's own profile and no sandbox (tests may run as root); virtual time lets the page's
# fetch finish before the DOM is dumped
run_browser() {
    timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
        --hide-scrollbars --window-size=1000,1100 --virtual-time-budget=8000 "$@" 2> "$T/browser.log"
}
run_browser --dump-dom "$URL" > "$T/dom.html" || bad "chromium failed: $(tail -n 5 "$T/browser.log")"
mkdir -p build
run_browser --screenshot="$T/shot.png" "$URL" > /dev/null && cp "$T/shot.png" build/serve-page.png
[ -s build/serve-page.png ] && ok || bad "no screenshot: $(tail -n 5 "$T/browser.log")"

# what the API says for the same sentence and options as the page's
$PY tests/cli/serve_client.py req "$PORT" POST /translate application/json \
    "{\"text\": \"$SENT\", \"beam\": 5, \"n_best\": 3, \"attention\": true, \"alignment\": true}" > "$T/api"
$PY - "$T/dom.html" "$T/api" > "$T/check" 2>&1 <<'EOF' && ok || bad "page check: $(cat "$T/check")"
import html.parser, json, sys

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.text, self.cells, self.src, self.tgt, self.nbest = [], {}, [], [], [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        self.stack.append((a.get("id"), cls))
        if "cell" in cls: self.cells.append((int(a["data-i"]), int(a["data-j"]), float(a["data-w"])))
        if tag == "li" and any(i == "nbest-list" for i, _ in self.stack[:-1]): self.nbest += 1
    def handle_endtag(self, tag):
        if self.stack: self.stack.pop()
    def handle_data(self, d):
        if not self.stack: return
        ident, cls = self.stack[-1]
        if ident: self.text[ident] = self.text.get(ident, "") + d
        if "src" in cls: self.src.append(d)
        if "tgt" in cls: self.tgt.append(d)

p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
api = json.loads(open(sys.argv[2], encoding="utf-8").read().split("\t", 1)[1])["translations"][0]
att = api["hyps"][0]["attention"]
errors = []
if p.text.get("best", "").strip() != api["text"]: errors.append(f"best {p.text.get('best')!r} != API {api['text']!r}")
if p.nbest != len(api["hyps"]): errors.append(f"{p.nbest} n-best items, API {len(api['hyps'])}")
if p.src != att["source"]: errors.append(f"source labels {p.src} != {att['source']}")
if p.tgt != att["target"]: errors.append(f"target labels {p.tgt} != {att['target']}")
want = [(i, j, w) for i, row in enumerate(att["weights"]) for j, w in enumerate(row)]
if [(i, j) for i, j, _ in p.cells] != [(i, j) for i, j, _ in want]: errors.append(f"{len(p.cells)} cells, want {len(want)}")
elif any(abs(a[2] - b[2]) > 1e-9 for a, b in zip(p.cells, want)): errors.append("cell weights differ from the API's")
if "ms" not in p.text.get("status", ""): errors.append(f"status line {p.text.get('status')!r}")
print("\n".join(errors) or f"ok: {api['text']!r}, {len(p.cells)} cells")
sys.exit(1 if errors else 0)
EOF
kill -TERM $PID; wait $PID
finish serve_browser
