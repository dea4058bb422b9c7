#!/bin/sh
# serve_browser.sh: nmt serve's page in a real browser, used as a person would. Headless Chromium,
# driven through the DevTools protocol (tests/cli/cdp.py), opens the page, gets a sentence typed
# into the text box key by key, waits for the translation, hovers the heat map, picks another
# hypothesis, types over the text and presses Enter, and opens a link with a sentence in it;
# tests/cli/serve_page.py checks each step against the API's answer for the same text and options
# (one "ok"/"FAIL" line per check, counted here), on an RNNsearch model and then on a Transformer.
# A screenshot of the page with an output word hovered is kept as build/serve-page.png. Without Chromium (Debian's `chromium`) the test says so
# and skips. The server and the browser are killed however the test ends, and the browser part
# is bounded in time.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
BROWSER=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$BROWSER" ]; then
    echo "serve_browser: SKIPPED: no chromium (scripts/install-deps.sh --test installs it)" >&2
    finish serve_browser
    exit 0
fi
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
PID=""
# the browser runs in a process group of its own, whose id serve_page.py writes down
cleanup() {
    [ -n "$PID" ] && kill -KILL "$PID" 2> /dev/null
    [ -s "$T/browser.pid" ] && kill -KILL -- "-$(cat "$T/browser.pid")" 2> /dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

. tests/cli/lib_serve.sh
mkdir -p build
rm -f build/serve-page.png
# the page on a recurrent model, then on a Transformer (the same view of its attention); the
# screenshot is the first's
for fx in tiny600 tf600; do
    model $fx "$T/$fx.nmt"
    check "$fx model trained" test -s "$T/$fx.nmt"
    serve_start "$T/log" "$T/$fx.nmt" --tokenize en --lowercase --normalize-punct --detokenize fr
    [ -n "$PORT" ] && ok || { bad "$fx: server did not start: $(cat "$T/log")"; continue; }
    shot=build/serve-page.png; [ $fx = tiny600 ] || shot=$T/$fx.png
    timeout -k 5 150 $PY -B tests/cli/serve_page.py "$BROWSER" "$PORT" "$T/profile.$fx" "$shot" \
        "$T/browser.pid" > "$T/page" 2>&1
    rc=$?
    while IFS= read -r line; do
        case $line in
            ok\ *) ok ;;
            FAIL\ *) bad "$fx: ${line#FAIL }" ;;
            *) echo "$line" >&2 ;;
        esac
    done < "$T/page"
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$T/page"; then
        bad "$fx: serve_page.py exited with $rc: $(tail -n 5 "$T/page")"
    fi
    kill -TERM "$PID"; wait "$PID"; PID=""
done
finish serve_browser
