#!/usr/bin/env bash
# Opening a huge Python file with language servers on: CPU-seconds and peak
# RSS of the whole process tree (the workbench and every server it starts)
# in the first SECONDS, next to the same binary with no servers.
#
#   cargo build --release && bash benches/oversized_answers.sh [LINES] [SECONDS] [BINARY...]
#   (SETUPS="sent" runs one set-up; KEEP=1 keeps the logs)
#
# The file has LINES lines (default 1 000 000, ~37 MB) with an undefined name
# every 5 lines, so ruff's answer about it is ~92 MB. Only `ruff` (found on
# PATH) is put on the servers' PATH, so runs compare like with like. Each
# binary runs in three set-ups: the defaults ("servers on"; a file over
# `large_file_bytes` is not sent), `large_file_bytes` raised so the file is
# sent ("sent anyway": the answer is over the message limit), and
# `servers = []` ("no servers"). Needs tmux and python3; Linux (/proc).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LINES="${1:-1000000}"
SECONDS_="${2:-30}"
shift $(( $# > 2 ? 2 : $# ))
BINARIES=("$@")
[ ${#BINARIES[@]} -gt 0 ] || BINARIES=("$ROOT/target/release/hello-tui")
SESSION="hello-oversize-$$"
# shellcheck source=benches/ruff_workspace.sh
. "$ROOT/benches/ruff_workspace.sh"
PADDED=1 ruff_workspace "$ROOT" oversized-bench huge.py "$LINES"
printf '' > "$WORK/on.toml"
printf '[diagnostics]\nlarge_file_bytes = 10000000000\n' > "$WORK/sent.toml"
printf '[diagnostics]\nservers = []\n' > "$WORK/off.toml"
SIZE=$(stat -c %s "$WORK/ws/huge.py")
echo "huge.py: $LINES lines, $SIZE bytes; first ${SECONDS_} s of each run"

# Samples the tree under $1 every 0.2 s for $2 s; prints CPU-seconds of the
# tree (each process's own time when last seen: a restarted server's time
# counts though it died, up to its last 0.2 s), the peak of the
# tree's summed RSS, and the peak RSS (VmHWM) of the workbench and of the
# largest server process seen.
measure() {
    python3 - "$1" "$2" <<'PY'
import os, sys, time
root, seconds = int(sys.argv[1]), float(sys.argv[2])
tick = os.sysconf("SC_CLK_TCK")
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[11]) + int(fields[12])  # ppid; utime + stime
def kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0
def tree():
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parents[int(name)] = stat(int(name))[0]
            except OSError:
                pass
    found, todo = {root}, [root]
    while todo:
        p = todo.pop()
        for child, parent in parents.items():
            if parent == p and child not in found:
                found.add(child); todo.append(child)
    return found
peak_tree, hwm, cpu = 0, {}, {}
end = time.time() + seconds
while True:
    total = 0
    for pid in tree():
        try:
            cpu[pid] = stat(pid)[1]
            total += kib(pid, "VmRSS:")
            hwm[pid] = max(hwm.get(pid, 0), kib(pid, "VmHWM:"))
        except OSError:
            pass
    peak_tree = max(peak_tree, total)
    if time.time() >= end:
        break
    time.sleep(0.2)
servers = max((v for p, v in hwm.items() if p != root), default=0)
print(f"{sum(cpu.values()) / tick:.1f} CPU-s | tree peak {peak_tree / 1024:.0f} MiB | "
      f"workbench peak {hwm.get(root, 0) / 1024:.0f} MiB | largest other process {servers / 1024:.0f} MiB")
PY
}

for BIN in "${BINARIES[@]}"; do
    for SETUP in ${SETUPS:-on sent off}; do
        LOG="$WORK/state/$SETUP.log"
        start_workbench "$BIN" "$SETUP" huge.py 120 40
        RESULT=$(measure "$PID" "$SECONDS_")
        RESTARTS=$(grep -c "restarting server" "$LOG" 2>/dev/null || true)
        DROPPED=$(grep -c "over the limit dropped" "$LOG" 2>/dev/null || true)
        tmux kill-session -t "$SESSION" 2>/dev/null || true
        sleep 2 # let the servers go
        echo "$(basename "$BIN") | $SETUP | $RESULT | restarts ${RESTARTS:-0} | dropped ${DROPPED:-0}"
    done
done
