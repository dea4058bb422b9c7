#!/bin/sh
# serve.sh: `nmt serve` as a client sees it, on 127.0.0.1 and a free port: the page and its
# routes; every kind of bad request (malformed JSON, wrong content type, a body over the limit,
# invalid UTF-8, empty and overlong texts, beams of 0 and 10^6, unknown fields, paths and methods)
# answered with its status and a JSON error while the server keeps serving; 16 concurrent requests
# translated exactly as `nmt translate` translates the same lines; alignments as --alignment hard;
# clients trickling a head or a body one byte a second cut off; connections over the limit refused
# with 503 while /health answers; HTTP framing errors answered in JSON with one status line; a
# flood of slow clients while /health answers; fairness between search options; clients that
# hang up dropped before decoding; sentence splitting, --unk-replace, CORS, JSON without a
# content type, several models by name; metrics; and the drain on SIGTERM (the request in flight
# answered, new connections refused, exit 0). Every wait is bounded.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3 # Debian's, which starts fastest
C="$PY tests/cli/serve_client.py"
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
model tiny600 "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
# (600 updates: fewer leave a model that answers "." to everything, and equal answers prove nothing)

. tests/cli/lib_serve.sh
start_server() { # LOG ARGS...: the server on the test's model
    l=$1; shift
    serve_start "$l" "$T/m.nmt" "$@" && return 0
    bad "server did not start: $(cat "$l")"
    return 1
}

# stop_server: SIGTERM and a bounded wait; sets RC to the exit status (124 if it would not stop)
stop_server() {
    kill -TERM $PID 2> /dev/null
    for _ in $(seq 100); do kill -0 $PID 2> /dev/null || break; sleep 0.1; done
    if kill -0 $PID 2> /dev/null; then kill -KILL $PID; RC=124; wait $PID 2> /dev/null; else wait $PID; RC=$?; fi
}

# expect NAME STATUS PATTERN METHOD PATH [TYPE [BODY]]: the answer's status, and its body matches
expect() {
    name=$1 want=$2 pat=$3; shift 3
    got=$($C req $PORT "$@" 2>&1)
    st=$(printf '%s' "$got" | head -n 1 | cut -f1)
    if [ "$st" != "$want" ]; then bad "$name: status $st, expected $want: $(printf '%s' "$got" | head -c 300)"; return; fi
    if ! printf '%s' "$got" | grep -Eq -- "$pat"; then bad "$name: body does not match /$pat/: $(printf '%s' "$got" | head -c 300)"; return; fi
    ok
}

J=application/json
start_server "$T/log" --max-body 65536 --max-words 100 --max-connections 20 --request-timeout 3 --timeout 10 \
    --header-timeout 2 --max-wait-ms 20 --workers 2 || { finish serve; exit 1; }

# the page and the small routes
expect "GET /" 200 '<textarea id="input"' GET /
expect "GET /app.js" 200 'fetch\("/translate"' GET /app.js
expect "GET /style.css" 200 '\.heatmap' GET /style.css
expect "health" 200 '"status":"ok"' GET /health
expect "good request" 200 '"translations":\[\{"text":"[^"]+"' POST /translate $J '{"text": "a man is riding a bike ."}'
good=$($C req $PORT POST /translate $J '{"text": "a man is riding a bike ."}')
# prefixes and constraints: the translation begins with the prefix and holds the phrase, as
# nmt translate --prefix --constraints writes it; what the model cannot do is a 400 naming the entry
printf 'a man is riding a bike .\n' > "$T/pc.en"; printf 'un homme\n' > "$T/pc.pfx"; printf 'une femme\n' > "$T/pc.terms"
pc=$($NMT_BIN translate --model "$T/m.nmt" --beam 5 --prefix "$T/pc.pfx" --constraints "$T/pc.terms" < "$T/pc.en")
case $pc in "un homme "*"une femme"*|"un homme "*) ok ;; *) bad "nmt translate with hints: '$pc'" ;; esac
expect "prefix and constraints" 200 "\"translations\":\\[\\{\"text\":\"$pc\"" POST /translate $J \
    '{"text": "a man is riding a bike .", "beam": 5, "prefix": "un homme", "constraints": ["une femme"]}'
expect "constraints per text" 200 '"text":"[^"]*une femme' POST /translate $J \
    '{"texts": ["a dog .", "a cat ."], "constraints": [["une femme"], []], "prefix": ["", "un"]}'
expect "unknown constraint" 400 "constraints.*\\[0\\]\\[0\\]: 'xyzzy' is not in the model" POST /translate $J \
    '{"text": "a dog .", "constraints": ["xyzzy"]}'
expect "empty constraint" 400 'is empty' POST /translate $J '{"text": "a dog .", "constraints": [" "]}'
expect "constraints per text count" 400 'has 1 lists of phrases for 2 texts' POST /translate $J \
    '{"texts": ["a dog .", "a cat ."], "constraints": [["un"]]}'
expect "prefix with split" 400 'not split into sentences' POST /translate $J '{"text": "a dog .", "split": true, "prefix": "un"}'
expect "prefix too long" 400 'length limit' POST /translate $J \
    '{"text": "a dog .", "prefix": "un un un un un un un un un un un un un un un un un un"}'

# "split": a paragraph is cut into its sentences (it was decoded as one sentence), each translated
# as it is alone, the texts joined
$C req $PORT POST /translate $J '{"text": "Two dogs are playing in the snow. A man is riding a bike!  St. Mary is here.", "split": true}' > "$T/split"
$C req $PORT POST /translate $J '{"texts": ["Two dogs are playing in the snow.", "A man is riding a bike!", "St. Mary is here."]}' > "$T/split3"
$PY - "$T/split" "$T/split3" > "$T/splitc" 2>&1 <<'PYEOF' && ok || bad "split: $(head -c 400 "$T/splitc")"
import json, sys
a = json.loads(open(sys.argv[1]).read().split("\t", 1)[1])["translations"]
b = json.loads(open(sys.argv[2]).read().split("\t", 1)[1])["translations"]
if len(a) != 1 or a[0]["sentences"] != b: sys.exit("sentences %s\nalone %s" % (a, b))
if a[0]["text"] != " ".join(t["text"] for t in b): sys.exit("joined %r" % a[0]["text"])
PYEOF
expect "no split by default" 200 '^200	\{"translations":\[\{"text":"[^"]*","score":' POST /translate $J '{"text": "Two dogs play. A man runs."}'
expect "split not boolean" 400 '\\"split\\" must be true or false' POST /translate $J '{"text": "a", "split": 1}'

# every bad request: its status and a JSON error that says what is wrong
expect "malformed JSON" 400 '"error":\{"status":400,"message":"malformed JSON' POST /translate $J '{"text": "a man'
expect "trailing bytes" 400 'more after the value' POST /translate $J '{"text": "a"} x'
expect "not an object" 400 'must be a JSON object' POST /translate $J '["a man"]'
expect "wrong content type" 415 'the body is JSON: Content-Type application/json, or none \(got application/xml\)' \
    POST /translate application/xml '{"text": "a"}'
# JSON however it is labelled by a client that does not say (none; curl -d's form type; a page's
# text/plain, which needs no CORS preflight): the same answer as application/json (415 before)
for ct in "" application/x-www-form-urlencoded "text/plain; charset=utf-8"; do
    r=$($C req $PORT POST /translate "$ct" '{"text": "a man is riding a bike ."}')
    [ "$r" = "$good" ] && ok || bad "JSON sent as '$ct': $(printf '%s' "$r" | head -c 200)"
done
awk 'BEGIN { printf "{\"text\": \""; for (i = 0; i < 70000; i++) printf "a"; print "\"}" }' > "$T/big.json"
expect "body over the limit" 413 'the limit is 65536' POST /translate $J "@$T/big.json"
printf '{"text": "a man \377\376 rides"}' > "$T/utf8.json"
expect "invalid UTF-8" 400 'not valid UTF-8 \(byte 16\)' POST /translate $J "@$T/utf8.json"
expect "empty text" 400 'the text is empty' POST /translate $J '{"text": ""}'
expect "blank text" 400 'the text is empty' POST /translate $J '{"text": "  \t "}'
expect "empty text in texts" 400 'texts\[1\] is empty' POST /translate $J '{"texts": ["a dog .", ""]}'
awk 'BEGIN { printf "{\"text\": \""; for (i = 0; i < 101; i++) printf "word "; print "\"}" }' > "$T/long.json"
expect "101 words" 413 'the text has 101 words; the limit is 100' POST /translate $J "@$T/long.json"
# bytes are bounded before any text stage runs: Moses' DOTMULTI rule is quadratic in a run of dots
awk 'BEGIN { printf "{\"text\": \"DOTMULTI"; for (i = 0; i < 32000; i++) printf "."; print "\"}" }' > "$T/dots.json"
expect "32,000 dots" 413 'texts\[0\] has 32008 bytes; the limit is 3200' POST /translate $J "@$T/dots.json"
# source_tokens split at every blank, as the model splits (a tab and a newline once stayed inside one)
$C req $PORT POST /translate $J '{"text": "a\tman\nrides", "attention": true}' > "$T/tabs" 2>&1
grep -q '"source_tokens":\["a","man","rides"\]' "$T/tabs" && ok || bad "source_tokens of a text with a tab: $(head -c 300 "$T/tabs")"
expect "beam 0" 400 '\\"beam\\" 0 out of range \[1, 32\]' POST /translate $J '{"text": "a dog .", "beam": 0}'
expect "beam 10^6" 400 '\\"beam\\" 1000000 out of range' POST /translate $J '{"text": "a dog .", "beam": 1000000}'
expect "beam 2.5" 400 '\\"beam\\" must be an integer' POST /translate $J '{"text": "a dog .", "beam": 2.5}'
expect "n_best over beam" 400 'larger than the beam' POST /translate $J '{"text": "a dog .", "beam": 2, "n_best": 3}'
expect "unknown field" 400 'unknown field \\"colour\\"' POST /translate $J '{"text": "a dog .", "colour": "red"}'
expect "field twice" 400 'given twice' POST /translate $J '{"text": "a dog .", "text": "a cat ."}'
expect "text and texts" 400 'not both' POST /translate $J '{"text": "a", "texts": ["b"]}'
expect "texts not strings" 400 'texts\[0\] is not a string' POST /translate $J '{"texts": [1]}'
expect "no text" 400 'no \\"text\\"' POST /translate $J '{"beam": 2}'
# \u0000 would end the text inside cJSON, and what follows it vanish unseen; an escaped
# backslash before "u0000" is text like any other
expect "\\u0000 in a text" 400 'holds \\\\u0000 \(a NUL character\) at byte 15' POST /translate $J '{"text": "a dog\u0000 runs"}'
expect "an escaped backslash before u0000" 200 '"translations"' POST /translate $J '{"text": "a dog\\u0000 runs"}'
# attention is bounded before decoding (4 texts of 60 words at n_best 32 could hold 1.4 million
# weights: 4 x 32 x 183 rows x 61 columns); 88 MB answers once came of such requests
awk 'BEGIN { printf "{\"texts\": ["; for (t = 0; t < 4; t++) { printf "%s\"", t ? "," : ""; for (i = 0; i < 60; i++) printf "dog "; printf "\"" }
    print "], \"beam\": 32, \"n_best\": 32, \"attention\": true}" }' > "$T/att.json"
expect "attention over the budget" 413 'could hold 1428864 weights; the limit is 1000000' POST /translate $J "@$T/att.json"
sed 's/"n_best": 32/"n_best": 16/' "$T/att.json" > "$T/att16.json"
expect "attention within the budget" 200 '"attention":\{"source":\["dog"' POST /translate $J "@$T/att16.json"
expect "bad bool" 400 '\\"attention\\" must be true or false' POST /translate $J '{"text": "a", "attention": 1}'
expect "unknown path" 404 'no such path: /nope' GET /nope
expect "POST elsewhere" 404 'no such path' POST /nope $J '{}'
expect "GET /translate" 405 'use POST' GET /translate
expect "DELETE /health" 405 'use GET' DELETE /health
after=$($C req $PORT POST /translate $J '{"text": "a man is riding a bike ."}')
[ "$after" = "$good" ] && ok || bad "a good request after the bad ones: $after (was $good)"

# 16 requests at once, 16 lines: what nmt translate gives on the same lines with the same beam
sed -n 1,16p "$D/test_2016_flickr.en" > "$T/in16"
"$NMT_BIN" translate --model "$T/m.nmt" --beam 4 --threads 1 < "$T/in16" > "$T/want16"
[ "$(sort -u "$T/want16" | wc -l)" -ge 12 ] && ok || bad "the test model's translations are too alike: $(sort "$T/want16" | uniq -c | head -n 3)"
$C many $PORT "$T/in16" 16 4 > "$T/got16" 2> "$T/err16" && ok || bad "concurrent requests failed: $(cat "$T/err16")"
cmp -s "$T/got16" "$T/want16" && ok || bad "concurrent answers differ from nmt translate: $(diff "$T/got16" "$T/want16" | head -n 4)"
# the same 16 as one request of 16 texts, with n-best and alignments
$PY -c 'import json,sys; print(json.dumps({"texts": open(sys.argv[1]).read().splitlines(), "beam": 4, "n_best": 2, "alignment": True}))' \
    "$T/in16" > "$T/req16.json"
$C req $PORT POST /translate $J "@$T/req16.json" > "$T/resp16"
$PY -c 'import json,sys; r = json.loads(open(sys.argv[1]).read().split("\t", 1)[1])
for t in r["translations"]: print(t["text"])' "$T/resp16" > "$T/batch16" 2>&1
cmp -s "$T/batch16" "$T/want16" && ok || bad "one request of 16 texts differs from nmt translate: $(diff "$T/batch16" "$T/want16" | head -n 4)"
"$NMT_BIN" translate --model "$T/m.nmt" --beam 4 --threads 1 --alignment hard < "$T/in16" | sed 's/.* ||| //' > "$T/links_want"
$PY -c 'import json,sys; r = json.loads(open(sys.argv[1]).read().split("\t", 1)[1])
for t in r["translations"]: print(t["hyps"][0].get("alignment", "").strip(), len(t["hyps"]))' "$T/resp16" > "$T/links_got"
paste -d '|' "$T/links_got" "$T/links_want" | awk -F '|' '{ n = split($1, a, " "); if (a[n] != 2) bad = 1; sub(/ [0-9]+$/, "", $1);
    if ($1 != $2) bad = 1 } END { exit bad }' && ok || bad "alignments or n-best differ: $(paste "$T/links_got" "$T/links_want" | head -n 3)"
# RESP (a client's "STATUS<tab>BODY") as nmt translate's n-best lines, scores to 8 digits
nbest_of() {
    $PY -c 'import json,sys; r = json.loads(open(sys.argv[1]).read().split("\t", 1)[1])
for i, t in enumerate(r["translations"]):
    for h in t["hyps"]: print("%d ||| %s ||| %.8f" % (i, h["text"], h["score"]))' "$1" 2>&1
}
# GOT and WANT: N n-best lines, the same texts, scores within 1e-5
same_nbest() {
    paste -d '\n' "$1" "$2" | awk -F ' \\|\\|\\| ' -v want="$3" 'NR % 2 { a = $1 FS $2; s = $NF; next }
        { n++; d = s - $NF; if (d < 0) d = -d; if (a != $1 FS $2 || d > 1e-5) bad = 1 } END { exit bad || n != want }'
}
# "length_penalty": as nmt translate --length-penalty: the same n-best lists, scores within 1e-5
# (a batch of other sentences sums some products in another order: nmt.h, nmt_translate_opts.batch)
$PY -c 'import json,sys; print(json.dumps({"texts": open(sys.argv[1]).read().splitlines(), "beam": 4, "n_best": 4, "length_penalty": 0.6}))' \
    "$T/in16" > "$T/reqlp.json"
$C req $PORT POST /translate $J "@$T/reqlp.json" > "$T/resplp"
nbest_of "$T/resplp" > "$T/lp_got"
"$NMT_BIN" translate --model "$T/m.nmt" --beam 4 --n-best 4 --length-penalty 0.6 --threads 1 < "$T/in16" > "$T/lp_want"
same_nbest "$T/lp_got" "$T/lp_want" 64 && ok || bad "length_penalty 0.6 differs from nmt translate's: $(diff "$T/lp_got" "$T/lp_want" | head -n 4)"
expect "length_penalty out of range" 400 '\\"length_penalty\\" 11 out of range \[0, 10\]' POST /translate $J '{"text": "a dog .", "length_penalty": 11}'
expect "length_penalty without normalize" 400 'goes with length normalisation' POST /translate $J '{"text": "a dog .", "normalize": false, "length_penalty": 0.6}'
expect "length_penalty not a number" 400 '\\"length_penalty\\" must be a number' POST /translate $J '{"text": "a dog .", "length_penalty": "x"}'
# "sample": as nmt translate --sample: a line's draws depend on its words and the seed only, so
# the server's batches draw what the command line draws (scores within 1e-5, as above)
$PY -c 'import json,sys; print(json.dumps({"texts": open(sys.argv[1]).read().splitlines(), "sample": True, "n_best": 3, "seed": 7, "temperature": 0.7, "sample_topk": 5}))' \
    "$T/in16" > "$T/reqs.json"
$C req $PORT POST /translate $J "@$T/reqs.json" > "$T/resps"
nbest_of "$T/resps" > "$T/s_got"
"$NMT_BIN" translate --model "$T/m.nmt" --sample --n-best 3 --seed 7 --temperature 0.7 --sample-topk 5 --threads 1 < "$T/in16" > "$T/s_want"
same_nbest "$T/s_got" "$T/s_want" 48 && ok || bad "sampling differs from nmt translate's: $(diff "$T/s_got" "$T/s_want" | head -n 4)"
# requests of other sampling options (and one of beam search) at once, mixed in the server's
# batches: each gets what the command line gives its line alone
$C mixed $PORT "$T/in16" '{"beam": 4}' '{"sample": true}' '{"sample": true, "seed": 8}' '{"sample": true, "temperature": 0.5}' \
    '{"sample": true, "n_best": 2}' '{"sample": true, "sample_topk": 3}' '{"sample": true, "sample_topp": 0.6}' > "$T/mix_got" 2> "$T/mix_err" ||
    bad "mixed requests failed: $(head -n 3 "$T/mix_err")"
k=0
for o in "--beam 4 --n-best 1" "--sample --n-best 1" "--sample --n-best 1 --seed 8" "--sample --n-best 1 --temperature 0.5" \
         "--sample --n-best 2" "--sample --n-best 1 --sample-topk 3" "--sample --n-best 1 --sample-topp 0.6"; do
    # shellcheck disable=SC2086
    "$NMT_BIN" translate --model "$T/m.nmt" $o --batch 1 --threads 1 < "$T/in16" | sed "s/^/$k ||| /"
    k=$((k + 1))
done > "$T/mix_want" 2>&1
awk -F ' \\|\\|\\| ' '{ print $1 " ||| " $2 " ||| " $3 }' "$T/mix_got" > "$T/mix_got3"
awk -F ' \\|\\|\\| ' '{ print $1 " ||| " $2 " ||| " $3 }' "$T/mix_want" > "$T/mix_want3"
[ "$(wc -l < "$T/mix_got3")" = 128 ] && cmp -s "$T/mix_got3" "$T/mix_want3" && ok ||
    bad "mixed sampling requests differ from the command line: $(diff "$T/mix_got3" "$T/mix_want3" | head -n 4)"
expect "seed without sample" 400 'goes with \\"sample\\": true' POST /translate $J '{"text": "a dog .", "seed": 3}'
expect "beam with sample" 400 'does not apply' POST /translate $J '{"text": "a dog .", "sample": true, "beam": 3}'
expect "temperature 0" 400 '\\"temperature\\" 0 out of range' POST /translate $J '{"text": "a dog .", "sample": true, "temperature": 0}'
expect "sample_topp 0" 400 '\\"sample_topp\\" 0 out of range \(0, 1\]' POST /translate $J '{"text": "a dog .", "sample": true, "sample_topp": 0}'
expect "sample_topp -0.5" 400 '\\"sample_topp\\" -0.5 out of range \(0, 1\]' POST /translate $J '{"text": "a dog .", "sample": true, "sample_topp": -0.5}'
expect "sample_topp without sample" 400 '\\"sample_topp\\" goes with' POST /translate $J '{"text": "a dog .", "sample_topp": 0.5}'

# a client that sends its head one byte a second is cut off (--header-timeout 2), and so is one
# that sends its body so (--request-timeout 3); the server goes on
r=$($C slow $PORT 12)
case $r in "closed after "[2-4]*) ok ;; *) bad "slow head: $r" ;; esac
r=$($C slowbody $PORT 12)
case $r in "closed after "[3-5]*) ok ;; *) bad "slow body: $r" ;; esac
expect "after the slow clients" 200 '"status":"ok"' GET /health

# more connections than allowed (20, each with a whole head and its body to come): 503 for the
# page, while /health still answers; then served again once they close
r=$($C hold $PORT 20 /)
case $r in 503*"too many connections"*) ok ;; *) bad "connections over the limit: $r" ;; esac
r=$($C hold $PORT 20 /health)
case $r in 200*'"status":"ok"'*) ok ;; *) bad "/health with the connections full: $r" ;; esac
expect "after the connection flood" 200 '<textarea' GET /

# framing errors: the server's JSON error and one status line, the connection closed (they had
# libmicrohttpd's HTML page, its status line sent twice; two lengths were not refused)
rawexpect() { # NAME STATUS PATTERN BYTES
    got=$($C raw $PORT "$4" 2>&1)
    n=$(printf '%s\n' "$got" | grep -c '^HTTP/')
    if [ "$n" != 1 ] || ! printf '%s' "$got" | head -n 1 | grep -q "^HTTP/1.1 $2 "; then
        bad "$1: $n status lines, expected one of $2: $(printf '%s' "$got" | head -c 300)"; return
    fi
    printf '%s' "$got" | tail -n 1 | grep -Eq "^\{\"error\":\{\"status\":$2,\"message\":\".*$3" && ok ||
        bad "$1: body does not match /$3/: $(printf '%s' "$got" | tail -n 1 | head -c 300)"
}
P='POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
rawexpect "Content-Length overflow" 413 'the limit is 65536' "${P}Content-Length: 99999999999999999999999\r\n\r\n"
rawexpect "Content-Length negative" 400 'Content-Length must be a decimal number' "${P}Content-Length: -5\r\n\r\n"
rawexpect "Content-Length blank after" 400 'Content-Length must be a decimal number' "${P}Content-Length: 5 \r\n\r\n{\"a\"}"
rawexpect "two Content-Lengths" 400 'Content-Length given twice' "${P}Content-Length: 14\r\nContent-Length: 2\r\n\r\n{\"text\":\"a .\"}"
rawexpect "chunked body" 411 'Content-Length' "${P}Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n"
rawexpect "HTTP/2.0" 505 'HTTP/2.0 is not supported' 'GET /health HTTP/2.0\r\nHost: x\r\n\r\n'
rawexpect "no Host" 400 'needs a Host header' 'GET /health HTTP/1.1\r\n\r\n'
rawexpect "folded header" 400 'folded' 'GET /health HTTP/1.1\r\nHost: x\r\n  y\r\n\r\n'
rawexpect "long target" 414 'the limit is 8192' "GET /$(head -c 9000 /dev/zero | tr '\0' a) HTTP/1.1\r\nHost: x\r\n\r\n"
# 3,000 short header lines fit the head's 16 KiB but not libmicrohttpd's pool of records (its own
# HTML page came back): at most 100
rawexpect "3000 header lines" 431 'more than 100 header lines' "GET / HTTP/1.1\r\nHost: x\r\n$($PY -c 'print("a:b\\r\\n" * 3000, end="")')\r\n"
rawexpect "long head" 431 'over the limit of 16384 bytes' "GET / HTTP/1.1\r\nHost: x\r\nX: $(head -c 17000 /dev/zero | tr '\0' a)\r\n\r\n"
# a head cut short by a half-close: 400 at once (the front door once polled it busily until 408)
got=$($C raw $PORT 'GET /health HTTP/1.1\r\nHo' half)
case $got in "HTTP/1.1 400 "*"shut before the request head ended"*) ok ;; *) bad "a head cut short: $(printf '%s' "$got" | head -c 200)" ;; esac
got=$($C raw $PORT "${P}Content-Length: 24\r\n\r\n{\"text\": \"a dog runs .\"}")
case $got in "HTTP/1.1 200 OK"*'"translations"'*) ok ;; *) bad "a raw request: $(printf '%s' "$got" | head -c 300)" ;; esac

# metrics: requests by status, batches, latency
$C req $PORT GET /metrics > "$T/metrics"
for pat in 'nmt_http_requests_total\{route="/translate",status="400"\} [0-9]+' 'nmt_http_requests_total\{route="other",status="404"\} 2' \
    'nmt_http_requests_total\{route="/translate",status="413"\} 5' 'nmt_batch_sentences_count [1-9]' \
    'nmt_translate_duration_seconds_bucket\{le="\+Inf"\} [1-9]' 'nmt_sentences_total [1-9]' 'nmt_target_tokens_per_second '; do
    grep -Eq "$pat" "$T/metrics" && ok || bad "metrics lack /$pat/: $(head -c 600 "$T/metrics")"
done
stop_server
[ "$RC" -eq 0 ] && ok || bad "exit status $RC after SIGTERM"


# drain: a request waiting for its batch (--max-wait-ms 3000) when SIGTERM comes is answered,
# the server takes no new connection, and exits 0
start_server "$T/log2" --max-wait-ms 3000 || { finish serve; exit 1; }
$C req $PORT POST /translate $J '{"text": "two dogs are playing in the snow ."}' > "$T/inflight" 2>&1 &
cpid=$!
for _ in $(seq 50); do # until the server holds it
    $C req $PORT GET /metrics 2> /dev/null | grep -q '^nmt_requests_in_flight 1' && break
    sleep 0.1
done
kill -TERM $PID
sleep 0.3
$C req $PORT GET /health > "$T/late" 2>&1 && bad "a new connection was served while draining: $(cat "$T/late")" || ok
for _ in $(seq 100); do kill -0 $PID 2> /dev/null || break; sleep 0.1; done
if kill -0 $PID 2> /dev/null; then kill -KILL $PID; bad "the server did not stop within 10 s of SIGTERM"; fi
wait $PID; RC=$?
[ "$RC" -eq 0 ] && ok || bad "exit status $RC after draining"
wait $cpid
grep -q '^200	{"translations":\[{"text":"' "$T/inflight" && ok || bad "the request in flight was not answered: $(cat "$T/inflight")"
grep -q "draining: 1 requests in flight" "$T/log2" && ok || bad "drain log: $(cat "$T/log2")"

# a decoder outlives an empty queue: two decoders wait for a batch of two to fill; the second
# sentence fills it, one decoder takes both, and the other must go back to waiting rather than
# end (it used to end, and the server ran on one decoder from then on: half the throughput)
start_server "$T/log3" --workers 2 --max-batch 2 --max-wait-ms 2000 || { finish serve; exit 1; }
n0=$(ls /proc/$PID/task | wc -l)
$C req $PORT POST /translate $J '{"text": "two dogs are playing ."}' > "$T/r1" 2>&1 &
cpid=$!
sleep 0.3
$C req $PORT POST /translate $J '{"text": "a man is running ."}' > "$T/r2" 2>&1
wait $cpid
sleep 0.3
n1=$(ls /proc/$PID/task | wc -l)
grep -q '^200' "$T/r1" && grep -q '^200' "$T/r2" && ok || bad "the two requests: $(cat "$T/r1" "$T/r2")"
[ "$n1" -eq "$n0" ] && ok || bad "threads of the server: $n0 before, $n1 after one decoder took a whole batch"
stop_server

# a flood of slow clients: 90 connections trickle their heads (a byte each 0.5 s) at a server of
# 20 connections and 60 waiting heads; /health answers every 0.1 s throughout (it used to get 503
# or no answer at all), the trickles get 408 after --header-timeout or, the oldest beyond 60, are
# closed to make room. (The 100 ms promise is make bench-serve's to measure: this machine is shared.)
start_server "$T/log7" --max-connections 20 --max-pending 60 --header-timeout 2 || { finish serve; exit 1; }
r=$($C flood $PORT 90 3)
set -- $r
[ "${2:-x}" = 0 ] && [ "${1:-9999}" -lt 1000 ] && ok || bad "/health under a flood of slow clients: slowest $1 ms, $2 failed"
[ "${3:-0}" -ge 30 ] && [ $((${3:-0} + ${4:-0})) = 90 ] && ok || bad "the slow clients: $3 got 408, $4 closed otherwise (of 90)"
stop_server

# --unk-replace TABLE: the <unk>s of the answers replaced as nmt translate --unk-replace replaces
# them (a table from the model's own attention); --cors ORIGIN: the CORS headers on every answer
# (the gate's and libmicrohttpd's) and the preflight answered
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --out "$T/lex" --threads 1 2> "$T/lex.log"
"$NMT_BIN" translate --model "$T/m.nmt" --beam 4 --threads 1 --unk-replace "$T/lex" < "$T/in16" > "$T/want16u"
start_server "$T/log8" --unk-replace "$T/lex" --cors https://example.org || { finish serve; exit 1; }
$C many $PORT "$T/in16" 16 4 > "$T/got16u" 2> "$T/err16u"
cmp -s "$T/got16u" "$T/want16u" && ! grep -q '<unk>' "$T/got16u" && grep -q '<unk>' "$T/want16" && ok ||
    bad "--unk-replace: $(diff "$T/got16u" "$T/want16u" | head -n 4) $(grep -c '<unk>' "$T/got16u") <unk> left"
for req in 'OPTIONS /translate HTTP/1.1\r\nHost: x\r\nOrigin: https://example.org\r\nAccess-Control-Request-Method: POST\r\n\r\n' \
    'GET /health HTTP/1.1\r\nHost: x\r\n\r\n' 'GET /nope HTTP/1.1\r\nHost: x\r\n\r\n' \
    'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 15\r\n\r\n{"text": "a ."}'; do
    got=$($C raw $PORT "$req" | tr -d '\r')
    printf '%s\n' "$got" | grep -q '^HTTP/1.1 [24]0[04] ' && printf '%s\n' "$got" | grep -qx 'Access-Control-Allow-Origin: https://example.org' &&
        printf '%s\n' "$got" | grep -q '^Access-Control-Allow-Headers: Content-Type' && ok || bad "CORS headers: $(printf '%s' "$got" | head -c 300)"
done
stop_server
start_server "$T/log9" --split-sentences || { finish serve; exit 1; }
expect "--split-sentences" 200 '"sentences":\[\{"text"' POST /translate $J '{"text": "Two dogs play. A man runs."}'
r=$($C req $PORT POST /translate $J '{"text": "Two dogs play. A man runs.", "split": false}')
case $r in *'"sentences"'*) bad "\"split\": false with --split-sentences: $r" ;; *'"hyps"'*) ok ;; *) bad "split false: $r" ;; esac
got=$($C raw $PORT 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
case $got in *Access-Control*) bad "CORS headers without --cors" ;; *) ok ;; esac
expect "OPTIONS without --cors" 405 'use POST' OPTIONS /translate
# split texts: an error names the text as sent and the sentence within it (the sentence's index
# among all the request's sentences once stood as texts[i]: "texts[2] is empty" for two texts)
expect "split: the empty text named" 400 'texts\[1\] is empty' POST /translate $J '{"texts": ["Two dogs play. A man runs.", " "]}'
awk 'BEGIN { printf "{\"texts\": [\"a dog .\", \"A man runs. A"; for (i = 0; i < 250; i++) printf " dog"; print " runs.\"]}" }' > "$T/split_long.json"
expect "split: the long sentence named" 413 'sentence 2 of texts\[1\] has 252 words; the limit is 200 per sentence' \
    POST /translate $J "@$T/split_long.json"
stop_server
expect_fail "a CORS origin with a blank" 2 "no blanks or control characters" "$NMT_BIN" serve --model "$T/m.nmt" --cors "a b"

# fairness across options: three 120-text requests at beam 64 are queued, then a one-text request
# at the default beam comes; it must not wait behind batches it cannot join until all three are
# done (one decoder, batches of 8: it used to end after all three)
head -n 120 "$T/s" > "$T/in120"
start_server "$T/log5" --workers 1 --max-batch 8 --max-beam 64 --max-queue 400 --max-texts 500 || { finish serve; exit 1; }
r=$($C fair $PORT "$T/in120" 64 2>&1)
[ "$r" = 3 ] && ok || bad "a default-beam request behind three beam-64 ones: $r of the three ended after it (3 expected)"
# a request that can never fit the queue (450 texts, --max-queue 400) is 413, not "retry" (503)
$PY -c 'import json; print(json.dumps({"texts": ["a dog ."] * 450}))' > "$T/q450.json"
expect "over the queue" 413 'at most 400 sentences' POST /translate $J "@$T/q450.json"
# a hint the decoder refuses names the request's text, not its place in a batch of 8 (texts[35]
# was "sentence 4")
$PY -c 'import json; print(json.dumps({"texts": ["a dog ."] * 40, "prefix": [""] * 35 + ["un " * 30] + [""] * 4}))' > "$T/p40.json"
expect "a refused hint named by its text" 400 '"message":"texts\[35\]: its prefix and constraints take 30 tokens' \
    POST /translate $J "@$T/p40.json"
stop_server
# bytes are bounded before any text stage runs, in every field: a prefix and one text's
# constraint phrases as a text is (--max-words x 32), and the request's strings together as
# --max-texts texts (a 300 KB prefix of dots once held the request thread for tens of minutes)
start_server "$T/log10" --max-texts 2 --max-words 100 --max-body 65536 || { finish serve; exit 1; }
awk 'BEGIN { printf "{\"text\": \"a dog .\", \"prefix\": \"un"; for (i = 0; i < 5000; i++) printf "."; print "\"}" }' > "$T/pdots.json"
expect "a prefix over the bytes" 413 '"prefix\\"\[0\] has 5002 bytes; the limit is 3200' POST /translate $J "@$T/pdots.json"
awk 'BEGIN { printf "{\"text\": \"a dog .\", \"constraints\": [\"un\", \""; for (i = 0; i < 3200; i++) printf "."; print "\"]}" }' > "$T/cdots.json"
expect "phrases over the bytes" 413 '"constraints\\" has 3202 bytes of phrases; the limit is 3200' POST /translate $J "@$T/cdots.json"
$PY -c 'import json; t = "a " * 1500; print(json.dumps({"texts": [t, t], "prefix": [t, t], "constraints": [[t], [t]]}))' > "$T/total.json"
expect "a request over the bytes" 413 'have 18000 bytes together; the limit is 6400 per request' POST /translate $J "@$T/total.json"
expect "within the bytes" 200 '"translations"' POST /translate $J '{"texts": ["a dog .", "a cat ."], "prefix": ["un", ""]}'
stop_server
# a client that hangs up while its request waits costs no decoding: 40 texts are decoding in one
# batch when a second request of 40 is sent and its connection closed; only the first 40 are
# translated (all 80 were). Lines of three sentences each, so that the first batch outlasts the
# second request by a margin.
head -n 120 "$T/s" | paste -d ' ' - - - > "$T/in40l"
start_server "$T/log6" --workers 1 --max-batch 64 --max-beam 64 || { finish serve; exit 1; }
r=$($C abandon $PORT "$T/in40l" 64 2>&1)
[ "$r" = 200 ] && ok || bad "the request before the one abandoned: $r"
sleep 0.3
n0=$($C req $PORT GET /metrics | sed -n 's/^nmt_sentences_total //p')
expect "gone client counted" 200 'status="499"\} 1' GET /metrics
stop_server
[ "$n0" = 40 ] && ok || bad "sentences decoded with a client gone: $n0, expected 40"

# a subword model: the attention and the links are over the words a user reads, not its pieces:
# the links are nmt translate --alignment hard's (which merges pieces into words), the heat map's
# columns the source's words and EOS, its rows the output's words (before detokenizing) and EOS
R=$NMT_SHARED/data/multi30k
head -n 400 "$R/train.en" > "$T/rs"; head -n 400 "$R/train.fr" > "$T/rt"; sed -n 1,8p "$R/test_2016_flickr.en" > "$T/rin"
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --model "$T/sw.nmt" --subwords unigram --subword-vocab 500 --emb 16 --hid 16 \
    --att 16 --maxout 8 --batch 20 --max-updates 200 --threads 1 --optimizer adam --lr 0.01 2> "$T/sw.log"
serve_start "$T/log4" "$T/sw.nmt" --workers 1 || bad "server on a subword model did not start: $(cat "$T/log4")"
$PY -c 'import json,sys; print(json.dumps({"texts": open(sys.argv[1]).read().splitlines(), "beam": 3, "attention": True, "alignment": True}))' \
    "$T/rin" > "$T/rreq.json"
$C req $PORT POST /translate $J "@$T/rreq.json" > "$T/rresp"
stop_server
"$NMT_BIN" translate --model "$T/sw.nmt" --beam 3 --threads 1 --alignment hard < "$T/rin" | sed 's/.* ||| //' > "$T/rlinks_want"
$PY - "$T/rresp" "$T/rin" > "$T/rcheck" 2>&1 <<'PYEOF' && ok || bad "subword model's attention in words: $(head -c 400 "$T/rcheck")"
import json, sys
r = json.loads(open(sys.argv[1]).read().split("\t", 1)[1])
cut = 0  # texts whose words were cut into more pieces: the merge had work to do
for t, line in zip(r["translations"], open(sys.argv[2]).read().splitlines()):
    h = t["hyps"][0]; a = h["attention"]
    if a["source"] != line.split() + ["</s>"]: sys.exit("source columns %s, words %s" % (a["source"], line.split()))
    cut += len(t["source_tokens"]) > len(line.split())
    if len(a["weights"]) != len(a["target"]) or any(len(w) != len(a["source"]) for w in a["weights"]):
        sys.exit("weights are not target x source")
    if any(abs(sum(w) - 1) > 2e-3 for w in a["weights"]): sys.exit("a row is not a distribution")
    print(h["alignment"])
if cut < 4: sys.exit("only %d texts cut into pieces" % cut)
PYEOF
grep -v '^$' "$T/rcheck" | cmp -s - "$T/rlinks_want" && ok || bad "subword links differ from nmt translate's: $(diff "$T/rcheck" "$T/rlinks_want" | head -n 4)"
grep -q '"source_tokens":\["▁' "$T/rresp" && ok || bad "source_tokens should stay the model's pieces"

# several models by name: each request is translated by the model it names ("model"; the first
# when it names none) as nmt translate translates with that model alone
"$NMT_BIN" translate --model "$T/sw.nmt" --beam 4 --threads 1 < "$T/in16" > "$T/want16sw"
serve_start "$T/log10" "word=$T/m.nmt" --model "sub=$T/sw.nmt" --workers 1 || bad "two models did not start: $(cat "$T/log10")"
$C many $PORT "$T/in16" 8 4 sub > "$T/got16sw" 2>&1
cmp -s "$T/got16sw" "$T/want16sw" && ! cmp -s "$T/want16sw" "$T/want16" && ok || bad "model sub: $(diff "$T/got16sw" "$T/want16sw" | head -n 4)"
$C many $PORT "$T/in16" 8 4 word > "$T/got16w" 2>&1
$C many $PORT "$T/in16" 8 4 > "$T/got16d" 2>&1
cmp -s "$T/got16w" "$T/want16" && cmp -s "$T/got16d" "$T/want16" && ok || bad "model word, or none: $(diff "$T/got16w" "$T/want16" | head -n 4)"
expect "unknown model" 400 'no model named \\"fr\\" \(this server has word, sub\)' POST /translate $J '{"text": "a dog .", "model": "fr"}'
expect "health lists the models" 200 '"models":\[\{"name":"word".*\{"name":"sub"' GET /health
grep -q 'models word, sub' "$T/log10" && ok || bad "start line: $(cat "$T/log10")"
stop_server
expect_fail "two models of one name" 1 "two models named 'm'" "$NMT_BIN" serve --model "$T/m.nmt" --model "m=$T/sw.nmt"
expect_fail "a shortlist for two models" 2 "--shortlist goes with one model" "$NMT_BIN" serve --model "a=$T/m.nmt" --model "b=$T/sw.nmt" --shortlist "$T/lex"

# bad options are usage errors
expect_fail "no model" 2 "--model is required" "$NMT_BIN" serve
expect_fail "bad port" 2 "--port 70000: out of range" "$NMT_BIN" serve --model "$T/m.nmt" --port 70000
expect_fail "beam over max" 2 "larger than --max-beam" "$NMT_BIN" serve --model "$T/m.nmt" --beam 40
expect_fail "bad host" 1 "host 'no.such.host.invalid'" "$NMT_BIN" serve --model "$T/m.nmt" --host no.such.host.invalid
# no server of this test tripped a sanitizer (under make test's ASan pass)
cat "$T"/log* | grep -q "runtime error\|Sanitizer" && bad "sanitizer: $(cat "$T"/log* | grep -A5 'runtime error\|Sanitizer' | head -n 8)" || ok
finish serve
