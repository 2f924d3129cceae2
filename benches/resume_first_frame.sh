#!/usr/bin/env bash
# Time from launch until a resumed 2 000-message session is on screen, a
# keystroke's echo, and Ctrl+Home, in the real binary inside tmux; next to
# the same binary opening an empty workspace (the baseline).
#   cargo build --release && bash benches/resume_first_frame.sh [runs]
set -euo pipefail
B="$(cd "$(dirname "$0")/.." && pwd)/target/release/hello-tui"
RUNS="${1:-3}"
WORK="$(mktemp -d)"
trap 'tmux kill-session -t hello-resume 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/session/.hello-tui/sessions" "$WORK/empty"
python3 - "$WORK/session" <<'PY'
import json, sys
root = sys.argv[1]
def answer(i):
    s = (f"## Step {i}: why `check_auth` rejects users\n\nThe handler compares the **role** "
         "against `\"admin\"` only, so every *plain* user is refused.\n\n```python\n")
    s += "".join(f"def handler_{i}_{l}(request, *args, **kwargs):  # step {l}\n" for l in range(13))
    s += "```\n\n"
    if i % 3 == 0:
        s += "```ts\nexport function checkAuth(user: User): boolean {\n  return true;\n}\n```\n\n"
    if i % 4 == 0:
        s += "| file | line |\n|---|---:|\n| auth.ts | 3 |\n\n"
    return s + "- the test now passes\n"
sid = "20261201-120000-abcd"
with open(f"{root}/.hello-tui/sessions/{sid}.jsonl", "w") as f:
    f.write(json.dumps({"type": "session.started", "id": sid, "workspace": root,
                        "created_at": "2026-12-01T12:00:00Z", "model": "m"}) + "\n")
    for i in range(2000):
        if i % 2 == 0:
            m = {"type": "message", "role": "user", "content": f"question {i}: why does checkAuth fail?"}
        else:
            m = {"type": "message", "role": "assistant", "content": answer(i)}
        f.write(json.dumps(m) + "\n")
PY
now() { date +%s%N; }
wait_for() { while ! tmux capture-pane -t hello-resume -p 2>/dev/null | grep -q "$1"; do sleep 0.002; done; }
launch() {
    tmux kill-session -t hello-resume 2>/dev/null || true
    local t; t=$(now)
    tmux new -d -s hello-resume -x 120 -y 40 "$*"
    wait_for "$PATTERN"
    echo $(( ($(now) - t) / 1000000 ))
}
for _ in $(seq "$RUNS"); do
    empty=$(PATTERN="Conversation" launch "$B" "$WORK/empty")
    first=$(PATTERN="messages)" launch "$B" --continue "$WORK/session")
    sleep 1
    t=$(now); tmux send-keys -t hello-resume Z; wait_for "Z"; echo_ms=$(( ($(now) - t) / 1000000 ))
    t=$(now); tmux send-keys -t hello-resume C-Home; wait_for "question 0:"; top=$(( ($(now) - t) / 1000000 ))
    echo "empty workspace ${empty} ms | resumed 2 000 messages: first frame ${first} ms, keystroke ${echo_ms} ms, Ctrl+Home ${top} ms"
done
