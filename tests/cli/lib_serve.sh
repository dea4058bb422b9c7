# lib_serve.sh: starting `nmt serve` for the shell tests and the benchmark (sourced, not run).
# serve_start LOG MODEL ARGS...: nmt serve on a free loopback port in the background, its
# standard error in LOG; sets PID and PORT, or returns 1 (PORT empty) when it has not printed its
# address within 10 s.
serve_start() {
    log=$1 model=$2; shift 2
    : > "$log"  # exists before the background job opens it, for the first sed below
    "${NMT_BIN:-bin/nmt}" serve --model "$model" --port 0 "$@" 2> "$log" &
    PID=$!
    PORT=""
    for _ in $(seq 100); do
        PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$log")
        [ -n "$PORT" ] && return 0
        kill -0 $PID 2> /dev/null || return 1
        sleep 0.1
    done
    return 1
}
