#!/usr/bin/env bash
# What 20 000 diagnostics cost the workbench: its RSS (VmRSS, and the peak
# VmHWM) once the Diagnostics pane holds ruff's answer about a file of LINES
# lines with an undefined name every 5 lines, next to the same binary on the
# same file with no language servers (`servers = []`, "off"), and with ruff
# on a file of the same size where every name is defined ("clean").
#
#   cargo build --release && bash benches/diagnostics_memory.sh [LINES] [BINARY...]
#   (KEEP=1 keeps the work folder)
#
# LINES defaults to 100 000 (20 000 diagnostics; ruff's answer is ~9 MB).
# Only `ruff` (found on PATH) is put on the servers' PATH. A run waits until
# the status bar counts every diagnostic (at most 120 s), lets the
# workbench settle for 5 s (the snapshot is built after a debounce), then
# reads /proc/PID/status of the workbench itself (not its servers). Needs
# tmux and python3; Linux (/proc).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LINES="${1:-100000}"
shift $(( $# > 1 ? 1 : $# ))
BINARIES=("$@")
[ ${#BINARIES[@]} -gt 0 ] || BINARIES=("$ROOT/target/release/hello-tui")
SESSION="hello-diagmem-$$"
# shellcheck source=benches/ruff_workspace.sh
. "$ROOT/benches/ruff_workspace.sh"
ruff_workspace "$ROOT" diagnostics-memory big.py "$LINES"
EXPECTED=$(( (LINES + 4) / 5 ))
# The same lines with every name defined: what the server costs without
# diagnostics.
sed 's/print(undefined_\([0-9]*\))/print("\1")/' "$WORK/ws/big.py" > "$WORK/ws/clean.py"
printf '' > "$WORK/on.toml"
cp "$WORK/on.toml" "$WORK/clean.toml"
printf '[diagnostics]\nservers = []\n' > "$WORK/off.toml"
echo "big.py: $LINES lines, $(stat -c %s "$WORK/ws/big.py") bytes, $EXPECTED undefined names"

kib() { awk -v key="$2" '$1 == key { print $2 }' "/proc/$1/status"; }

for BIN in "${BINARIES[@]}"; do
    for SETUP in off clean on; do
        FILE=big.py
        [ "$SETUP" != clean ] || FILE=clean.py
        start_workbench "$BIN" "$SETUP" "$FILE" 160 50
        START=$(date +%s.%N)
        WAITED="-"
        if [ "$SETUP" = on ]; then
            # The status bar counts errors as `✖ N`.
            for _ in $(seq 1 600); do
                if tmux capture-pane -p -t "$SESSION" | grep -q "✖ $EXPECTED\b"; then
                    WAITED=$(python3 -c "import time; print(f'{time.time() - $START:.1f} s')")
                    break
                fi
                sleep 0.2
            done
            [ "$WAITED" != "-" ] || { echo "no $EXPECTED diagnostics after 120 s" >&2; tmux capture-pane -p -t "$SESSION" | tail -3 >&2; exit 1; }
        fi
        # `clean`: ruff answers in about as long as about big.py.
        [ "$SETUP" != clean ] || sleep 2
        sleep 5
        SHOWN=$(tmux capture-pane -p -t "$SESSION" | tail -1 | grep -o '✖ [0-9]*' || echo "no errors")
        RSS=$(kib "$PID" VmRSS:)
        HWM=$(kib "$PID" VmHWM:)
        tmux kill-session -t "$SESSION" 2>/dev/null || true
        sleep 1
        echo "$(basename "$BIN") | $SETUP | RSS $((RSS / 1024)) MiB | peak $((HWM / 1024)) MiB | counted after $WAITED | status bar: $SHOWN"
    done
done
