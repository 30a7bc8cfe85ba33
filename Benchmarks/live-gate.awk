# The gate of `scripts/live-scaling gate` (issue 37, item 5): reads RelateLiveScaling's
# output — one block per feed, workload and written column, a row per window of each rate
# (RELATE_LIVE_WINDOWS) — and prints one table of every figure the issue sets a target for,
# each judged against it with the noise band its windows measured, then answers through
# its exit status.
#
#   awk -f Benchmarks/live-gate.awk live-scaling-output.txt
#
# A block begins with its title, `<feed>, <100 tenants (a principal each)|one principal>,
# writers change the <title|rank>: …`, where the feed is `triggers`, `logicalDecoding`, or
# `logicalDecoding (replica identity FULL)` (shown as `logical FULL`); a window's row is
#   rate | commits/s | CPU ms | server CPU ms | statements | deliveries/s | deliveries per
#   CPU second | p50 / p95 / p99 ms | seen of expected | resident / peak MB
#
# A figure is the median of its windows; its band is half their spread, (max − min) / 2.
# A ratio of two figures (row-level security: 100 tenants over one principal, same feed,
# column and rate) combines their relative bands as independent errors, as gate.awk does.
#
# Where today's code misses the issue's target, or meets it too narrowly to hold on a busy
# machine, the figure is judged against a guard instead (`guardFor`), set about 1.5 times
# the figures of Benchmarks/README.md ("A change to every group marked once", 2026-11-29;
# for the blocks under replica identity FULL, "Logical decoding: `FULL` under row-level
# security, and two ideas that did not pay"), so that the gate passes on today's code and
# fails on a regression: lower the guards as the figures fall. The verdict against the issue's target is printed all the same.
#
# Exit status: 1 when no window was read, or a block's run printed an error; 2 when a
# figure misses its guard (or, without one, its target) by more than its band, or once
# the writers stopped a stream's last answer was not what a fresh read as its principal
# answers (a change lost); 0 otherwise.

function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }

/^(triggers|logicalDecoding|logicalDecoding \(replica identity FULL\)), / {
    split($0, t, ", ")
    feed = (t[1] == "logicalDecoding") ? "logical" : (t[1] == "logicalDecoding (replica identity FULL)") ? "logical FULL" : t[1]
    workload = (t[2] ~ /^one principal/) ? "one" : "tenants"
    column = ($0 ~ /writers change the rank/) ? "rank" : "title"
    block = feed "|" workload "|" column
    if (!(block in seenBlock)) { seenBlock[block] = 1; blocks[++blockCount] = block }
    next
}
/^[0-9]+ \| / && block != "" {
    n = split($0, f, / \| /)
    if (n < 10) next
    rate = f[1] + 0
    key = block SUBSEP rate
    if (!(key in windows)) { rates[block, ++rateCount[block]] = rate }
    w = ++windows[key]
    fig["cpu", key, w] = f[3] + 0; fig["server", key, w] = f[4] + 0; fig["statements", key, w] = f[5] + 0
    fig["perCPU", key, w] = f[7] + 0
    split(f[8], latency, " / "); fig["p95", key, w] = latency[2] + 0
    split(f[9], probes, " of "); unseen[key] += probes[2] - probes[1]; expected[key] += probes[2]
    split(f[10], memory, " / "); fig["peak", key, w] = memory[2] + 0
    read++
    next
}
/^quiet: [0-9]+ of [0-9]+ streams/ && block != "" {
    quietHeld[block] = $2; quietAll[block] = $4
    # The rows compared (since 2026-11-29): none would make the check an empty one.
    if (match($0, /\([0-9]+ rows\)/)) quietRows[block] = substr($0, RSTART + 1, RLENGTH - 7) + 0
    next
}
/failed|error|Error/ { failed = 1; print "live-gate: " $0 > "/dev/stderr" }

# The median, half-spread and largest of figure `name` over the windows of `key`, in
# `mid`, `band` and `top` (sorted by insertion: three windows, or a few).
function spread(name, key,   n, i, j, x, s) {
    n = windows[key]
    for (i = 1; i <= n; i++) {
        x = fig[name, key, i]
        for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]
        s[j + 1] = x
    }
    mid = (n % 2) ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
    band = (s[n] - s[1]) / 2
    top = s[n]
}

# The guard of a figure of block `b` (feed|workload|column) at `rate`, 0 where the target
# decides. What misses today: the CPU per commit at 100 a second, where each commit pays a
# round's thread hand-offs alone; logical decoding under the default replica identity,
# which does not say which columns an update changed, so that every principal's requests
# test each updated row; rows moving between the requests; the server's side of
# row-level security (a transaction and a settings statement before each principal's read,
# the stored payloads' read).
function guardFor(what, b, rate) {
    # Logical decoding with replica identity FULL names every update's changed columns, as
    # the triggers do: guarded as they are (2026-11-29, two runs: 0.47–0.55 ms at 100/s;
    # row-level security 0.88–1.15× Relate's CPU and 0.90–1.28× the server's at 100/s).
    if (b ~ /^logical FULL/) {
        if (what == "cpu") return (rate >= 1000) ? 0 : 0.85
        if (what == "rls cpu") return (rate >= 1000) ? 0 : 1.7
        if (what == "rls server") return 2
        return 0
    }
    if (what == "cpu") {
        if (rate >= 1000) return (b == "logical|tenants|title") ? 0.65 : (b ~ /rank$/) ? 0.8 : 0
        if (b ~ /rank$/) return 2.2
        if (b == "logical|tenants|title") return 2.2
        return (b ~ /^logical/) ? 1.1 : 0.85
    }
    if (what == "p95") return (b ~ /rank$/) ? 200 : 0
    if (what == "perCPU") return (b == "logical|tenants|title") ? 15000 : 0
    if (what == "rls cpu") return (rate >= 1000) ? ((b ~ /^logical/) ? 1.8 : 0) : (b ~ /^logical/) ? 4 : 1.7
    if (what == "rls server") return (b ~ /^logical/) ? ((rate < 1000) ? 4.3 : 2) : 2.3
    return 0
}

# Three decimals for a small figure, none for a count of thousands.
function figure(x) { return (x >= 1000) ? sprintf("%.0f", x) : sprintf("%.3f", x) }

# Prints one row. `op` is "≤" or "≥"; target 0: none (shown, never judged); guard 0: the
# target decides the exit status.
function judge(label, value, band, unit, op, target, guard,   excess, verdict, limit, shown, guarded) {
    if (target == 0) {
        verdict = ""; shown = "—"
    } else {
        shown = op " " target
        excess = (op == "≥") ? target - value : value - target
        if (excess <= 0) verdict = "met"
        else if (excess > band) verdict = "MISSED"
        else verdict = "missed, within noise"
        judged++
        if (verdict == "met") met++
    }
    guarded = ""
    limit = (guard != 0) ? guard : target
    if (limit != 0) {
        excess = (op == "≥") ? limit - value : value - limit
        if (excess > band) {
            beyond++
            guarded = (guard != 0) ? "guard " guard " BROKEN" : ""
        } else if (guard != 0) guarded = "guard " guard " held"
    }
    printf "  %-58s %9s %-3s %9s  %-8s %-22s %s\n", label, figure(value), unit, "±" figure(band), shown, verdict, guarded
}

# The quotient of two figures with their half-spreads, as a ratio row.
function quotient(label, a, ha, b, hb, target, guard,   r) {
    if (a <= 0 || b <= 0) return
    r = a / b
    judge(label, r, r * sqrt((ha / a) ^ 2 + (hb / b) ^ 2), "×", "≤", target, guard)
}

END {
    if (!read) {
        print "live-gate: no window was read; see the output above" > "/dev/stderr"
        exit 1
    }
    print ""
    print "Figures: medians of each rate's windows; band = ±(max − min)/2 of them"
    for (i = 1; i <= blockCount; i++) {
        b = blocks[i]
        split(b, part, "|")
        print "  " part[1] ", " (part[2] == "one" ? "one principal" : "100 tenants (a principal each)") ", writers change the " part[3] ":"
        highest = 0
        for (j = 1; j <= rateCount[b]; j++) if (rates[b, j] > highest) highest = rates[b, j]
        for (j = 1; j <= rateCount[b]; j++) {
            r = rates[b, j]; k = b SUBSEP r
            spread("cpu", k)
            judge(r "/s: Relate CPU per commit", mid, band, "ms", "≤", 0.5, guardFor("cpu", b, r))
            spread("p95", k)
            judge(r "/s: commit to snapshot, p95", mid, band, "ms", "≤", 50, guardFor("p95", b, r))
            spread("perCPU", k)
            judge(r "/s: deliveries per CPU second", mid, band, "", "≥", r == highest ? 20000 : 0, r == highest ? guardFor("perCPU", b, r) : 0)
            spread("peak", k)
            judge(r "/s: peak resident memory", top, 0, "MB", "≤", 120, 0)
            spread("server", k)
            judge(r "/s: PostgreSQL CPU for Relate per commit", mid, band, "ms", "≤", 0, 0)
            spread("statements", k)
            judge(r "/s: statements per commit", mid, band, "", "≤", 0, 0)
            # A probe not seen in its window came late, or a writer overwrote its title
            # before its group was read again (the snapshots coalesced); the quiet check
            # below tells a lost change. A late one's delay is in no percentile above.
            printf "  %-58s %9d of %d\n", r "/s: probe deliveries seen in their window", expected[k] - unseen[k], expected[k]
        }
        # Once the writers stop, every stream's last answer is what its principal reads.
        if (!(b in quietHeld)) { print "  quiet: no check of the streams' last answers (an older RelateLiveScaling?)"; beyond++ }
        else {
            empty = (b in quietRows) && quietRows[b] == 0
            printf "  %-58s %9d of %d %s\n", "quiet: streams holding what a fresh read answers", quietHeld[b], quietAll[b], \
                empty ? "EMPTY (no row compared)" : (quietHeld[b] == quietAll[b]) ? "all" : "BEHIND"
            if (quietHeld[b] != quietAll[b] || empty) beyond++
        }
    }
    # Row-level security: 100 tenants against one principal, same feed, column and rate.
    for (i = 1; i <= blockCount; i++) {
        b = blocks[i]
        split(b, part, "|")
        if (part[2] != "tenants") continue
        o = part[1] "|one|" part[3]
        if (!(o in seenBlock)) continue
        if (!printedRLS++) print "  row-level security, 100 tenants / one principal:"
        for (j = 1; j <= rateCount[b]; j++) {
            r = rates[b, j]; k = b SUBSEP r; ko = o SUBSEP r
            if (!(ko in windows)) continue
            label = part[1] ", " part[3] ", " r "/s"
            spread("cpu", k); a = mid; ha = band; spread("cpu", ko)
            quotient(label ": Relate CPU", a, ha, mid, band, 1.3, guardFor("rls cpu", b, r))
            spread("server", k); a = mid; ha = band; spread("server", ko)
            quotient(label ": PostgreSQL CPU", a, ha, mid, band, 1.3, guardFor("rls server", b, r))
        }
    }
    printf "\n%d figures with a target: %d met; %d beyond their guard or target and its band\n", judged, met, beyond
    fflush()
    if (failed) exit 1
    if (beyond) {
        print "live-gate: " beyond " figure(s) beyond their guard or target" > "/dev/stderr"
        exit 2
    }
}
