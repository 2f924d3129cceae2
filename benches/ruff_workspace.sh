# Sourced by the benches that open a big Python file with ruff: makes
# $WORK (under target/, not /tmp: the sandbox hides the host's /tmp from
# servers) with ws/ (its own git root) holding FILE of LINES lines, an
# undefined name every 5 lines, and bin/ holding only ruff (found on PATH).
# Removes it and the tmux session $SESSION on exit unless KEEP is set.
# PADDED=1 writes the other lines' numbers zero-padded, as
# oversized_answers.sh always has (`x = 0000001` is invalid Python, so ruff
# also reports a syntax error on each of them).
#   ruff_workspace ROOT PREFIX FILE LINES
ruff_workspace() {
    local root="$1" prefix="$2" file="$3" lines="$4" ruff
    ruff="$(command -v ruff)" || { echo "ruff must be on PATH" >&2; exit 1; }
    mkdir -p "$root/target"
    WORK="$(mktemp -d -p "$root/target" "$prefix.XXXXXX")"
    trap 'tmux kill-session -t "$SESSION" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
    mkdir -p "$WORK/ws" "$WORK/bin" "$WORK/state"
    ln -s "$ruff" "$WORK/bin/ruff"
    git init -q "$WORK/ws"
    python3 - "$WORK/ws/$file" "$lines" "${PADDED:-}" <<'PY'
import sys
path, lines, padded = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
with open(path, "w") as f:
    for i in range(lines):
        if i % 5 == 0:
            f.write(f"print(undefined_{i:07d})  # undefined\n")
        else:
            f.write(f"value_{i:07d} = {f'{i:07d}' if padded else i} * 2  # defined\n")
PY
}

# Starts BIN on FILE in the workspace, in a new tmux session $SESSION of
# WIDTHxHEIGHT, with $WORK/SETUP.toml as its config and $WORK/state/SETUP.log
# as its log; sets PID to the workbench's.
#   start_workbench BIN SETUP FILE WIDTH HEIGHT
start_workbench() {
    local bin setup="$2" file="$3" width="$4" height="$5"
    bin="$(realpath "$1")" # the session starts in the workspace
    rm -f "$WORK/state/$setup.log"
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    tmux new -d -s "$SESSION" -x "$width" -y "$height" \
        "cd '$WORK/ws' && exec env PATH='$WORK/bin:/usr/bin:/bin' HELLO_TUI_CONFIG='$WORK/$setup.toml' \
         HELLO_TUI_LOG_FILE='$WORK/state/$setup.log' XDG_STATE_HOME='$WORK/state' XDG_DATA_HOME='$WORK/state' '$bin' '$file'"
    sleep 0.5
    PID=$(tmux display -p -t "$SESSION" '#{pane_pid}')
}
