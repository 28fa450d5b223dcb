#!/usr/bin/env bash
# Record tests/fixtures/transcripts/real-claude-p*.jsonl again from the real Claude Code (see the README there).
#
#   bash .ci/claude-code-transcript.sh [OUT_DIR]     default OUT_DIR: a new temporary folder (printed)
#
# The real `claude -p` (installed by .ci/claude-code-mcp.sh --install-only) runs four prompts of one session in
# a fresh git repository, its model played by memoria_bench/clis/anthropic_api.py on 127.0.0.1 (Bash ls, Write, a failing
# Bash, Edit, an Agent subagent, /compact), with a command hook on every event that saves the JSON it is given.
# Machine paths are replaced by /home/dev/…; nothing leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-$(mktemp -d /tmp/claude-transcript-XXXXXX)}"
claude="$(bash .ci/claude-code-mcp.sh --install-only | tail -n 1)"
make venv >/dev/null
CLAUDE_CODE_BIN="${claude}" OUT_DIR="${out}" timeout 600 .venv/bin/python - <<'PY'
import json, os, shutil, subprocess, tempfile
from pathlib import Path

from memoria_bench.clis.anthropic_api import FakeAnthropic, Text, ToolUse

claude, out = os.environ["CLAUDE_CODE_BIN"], Path(os.environ["OUT_DIR"])
root = Path(tempfile.mkdtemp(prefix="claude-rec-"))
home, proj, dump = root / "home", root / "demo-project", root / "hooks"
for folder in (home, proj, dump, proj / ".claude"):
    folder.mkdir(parents=True)
subprocess.run(["git", "init", "-q", str(proj)], check=True)
(proj / "README.md").write_text("# demo\n")
hook = root / "dump-hook.sh"
hook.write_text(f"#!/bin/sh\ncat > {dump}/$1-$(date +%s%N).json\n")
hook.chmod(0o755)
events = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact", "SubagentStop", "PostToolUse"]
hooks = {e: [{"hooks": [{"type": "command", "command": f"{hook} {e}"}]}] for e in events}
(proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def results(body):
    return [b for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def script(body):
    if "Bash" not in {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}:
        return Text("Listing files")
    asked, n = json.dumps(body.get("messages", [])), len(results(body))
    first = json.dumps(body["messages"][0])
    if "SUBTASK-LIST" in first and "third prompt" not in first:
        return Text("Subagent report: the project holds README.md and notes.txt.")
    if "third prompt" in asked:
        if n == 4:
            return ToolUse("Agent", {"description": "List project files", "subagent_type": "general-purpose",
                                     "prompt": "SUBTASK-LIST: list the files in the project and report back"},
                           id="toolu_rec_05")
        return Text("The subagent reports README.md and notes.txt.")
    if "second prompt" in asked:
        if n == 3:
            return ToolUse("Edit", {"file_path": str(proj / "notes.txt"), "old_string": "hello",
                                    "new_string": "hello world"}, id="toolu_rec_04")
        return Text("I edited notes.txt to say hello world.")
    steps = [ToolUse("Bash", {"command": "ls", "description": "List files"}, id="toolu_rec_01"),
             ToolUse("Write", {"file_path": str(proj / "notes.txt"), "content": "hello\n"}, id="toolu_rec_02"),
             ToolUse("Bash", {"command": "cat does-not-exist.txt", "description": "Read a missing file"},
                     id="toolu_rec_03")]
    return steps[n] if n < len(steps) else Text(
        "I listed the files, wrote notes.txt, and the missing file could not be read.")


fake = FakeAnthropic(script).start()
env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORIA_", "ANTHROPIC_", "CLAUDE"))} | {
    "HOME": str(home), "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests",
    "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
tools = ["--allowedTools", "Bash,Write,Edit,Agent"]
for args in (["-p", "List the files here, write notes.txt with hello, then show does-not-exist.txt", *tools],
             ["-p", "This is the second prompt: change hello to hello world in notes.txt", "--continue", *tools],
             ["-p", "This is the third prompt: ask a subagent to list the files", "--continue", *tools],
             ["-p", "/compact", "--continue"]):
    subprocess.run([claude, *args], cwd=proj, env=env, capture_output=True, timeout=180, check=True)
fake.stop()


def clean(text):
    project_dir = str(proj).replace("/", "-").replace("_", "-").replace(".", "-")
    return (text.replace(str(proj), "/home/dev/demo-project").replace(str(home), "/home/dev")
            .replace(project_dir, "-home-dev-demo-project"))


out.mkdir(parents=True, exist_ok=True)
(main,) = (home / ".claude" / "projects").glob("*/*.jsonl")
(sub,) = (home / ".claude" / "projects").glob("*/*/subagents/*.jsonl")
(out / "real-claude-p.jsonl").write_text(clean(main.read_text()))
(out / "real-claude-p-subagent.jsonl").write_text(clean(sub.read_text()))
dumped = sorted(dump.iterdir(), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
(out / "real-claude-p-hooks.jsonl").write_text("".join(clean(p.read_text().strip()) + "\n" for p in dumped))
shutil.rmtree(root)
print(out)
PY
