# Turns the debug output of a benchmark executable run without the plugin (HdrHistogram
# percentile tables, one per metric) into the plugin's table rows that gate.awk reads:
# the benchmark's name alone on a line, then │ metric │ p0 │ p25 │ p50 │ p75 │ p90 │ p99 │ p100 │ n │.
# A percentile is the first printed value whose cumulative count reaches
# max(round(p × n), 1), as HdrHistogram's valueAtPercentile counts; the printout skips
# some counts, so p25 and p75 may be the next value up.
#
#   RELATE_TEST_URL=… .build/release/PeerBenchmarks --filter 'peers insert 100k' >run.txt
#   awk -f debug-tables.awk run.txt | awk -v gate=1 -v strict=0 -f gate.awk
function pct(p,   want, i) {
    want = int(p * total + 0.5); if (want < 1) want = 1
    for (i = 1; i <= n; i++) if (cnt[i] >= want) return int(val[i])
    return int(val[n])
}
/^Debug results for / { bench = $0; sub(/^Debug results for /, "", bench); sub(/:$/, "", bench); printf "\n%s\n\n", bench; next }
/:$/ && !/^ / { metric = $0; sub(/:$/, "", metric); n = 0; next }
/^ *[0-9.]+ +[0-9.]+ +[0-9]+/ { val[++n] = $1; cnt[n] = $3; next }
/^#\[Max/ {
    total = $NF; sub(/\]/, "", total)
    if (metric ~ /^Time \(wall clock\)/) metric = "Time (wall clock) (ns)"
    printf "│ %s │ %.0f │ %.0f │ %.0f │ %.0f │ %.0f │ %.0f │ %.0f │ %d │\n", metric, pct(0), pct(0.25), pct(0.5), pct(0.75), pct(0.9), pct(0.99), pct(1), total
}
