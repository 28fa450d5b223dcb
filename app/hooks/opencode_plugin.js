// Memoria's plugin for OpenCode: written by `memoria hook install --agent opencode`, removed by
// `memoria hook uninstall --agent opencode` (edit the install, not this file).
//
// OpenCode has no command hooks; a plugin's `chat.message` hook sees each prompt before it is saved
// and sent. For every prompt this runs Memoria's hook client (`memoria-hook --agent opencode
// user-prompt-submit`, and `session-start` before a session's first prompt in this process), hands
// it Claude Code's payload on stdin, and adds the context it answers to the prompt's message as a
// synthetic text part, which the model reads and the screen does not show. The client gives up
// after its own budget and prints nothing when the server is down or slow; this file kills it after
// `timeoutMs` and adds nothing. It never writes to the terminal.
//
// Capture: when a session goes idle, its messages (what they said, the tools they called; never the
// synthetic parts) go to <state dir>/opencode/<session>.jsonl, one line per finished message, and
// the hook client's `capture` runs on that file, detached (memoria_hook_client/opencode_transcript.py
// reads it).
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

const MEMORIA = "__MEMORIA_CONFIG__";

function run(sub, payload) {
  return new Promise((resolve) => {
    const out = [];
    let child;
    try {
      child = spawn(MEMORIA.commands[sub][0], MEMORIA.commands[sub].slice(1), {
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve("");
      return;
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve("");
    }, MEMORIA.timeoutMs);
    child.on("error", () => {
      clearTimeout(timer);
      resolve("");
    });
    child.stdout.on("data", (chunk) => {
      out.push(chunk);
    });
    child.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(out).toString("utf8")); // whole, so no character is split
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function context(answer) {
  try {
    const text = JSON.parse(answer)?.hookSpecificOutput?.additionalContext;
    return typeof text === "string" && text.trim() ? text : "";
  } catch {
    return "";
  }
}

// A part id after `last`'s: OpenCode orders a message's parts by id ("prt_", 12 hex digits that
// grow with time, then 14 random letters).
function nextId(last, n) {
  const stamp = last.slice(4, 16);
  if (!last.startsWith("prt_") || !/^[0-9a-f]{12}$/.test(stamp)) return undefined;
  const next = (BigInt("0x" + stamp) + BigInt(n)).toString(16).padStart(12, "0");
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let tail = "";
  for (let i = 0; i < 14; i++) tail += letters[Math.floor(Math.random() * letters.length)];
  return "prt_" + next + tail;
}

// The hook client's state folder (memoria_hook_client/state.py: the same rule).
function stateDir() {
  const own = (process.env.MEMORIA_CLIENT__STATE_DIR ?? "").trim();
  if (own) return own.startsWith("~/") ? join(homedir(), own.slice(2)) : own;
  const xdg = process.env.XDG_STATE_HOME ?? "";
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".local", "state"), "memoria");
}

// What of a message the capture reads; nothing that changes once the message is complete.
function kept(message) {
  const info = message.info ?? {};
  const parts = [];
  for (const part of message.parts ?? []) {
    if (part.type === "text" && !part.synthetic && typeof part.text === "string") {
      parts.push({ type: "text", text: part.text });
    } else if (part.type === "tool") {
      const state = part.state ?? {};
      parts.push({
        type: "tool",
        tool: part.tool,
        state: { status: state.status, input: state.input, error: state.error },
      });
    }
  }
  const record = { id: info.id, role: info.role, time: info.time };
  if (info.role === "assistant") {
    record.finish = info.finish;
    record.path = { cwd: info.path?.cwd };
  }
  return JSON.stringify({ info: record, parts });
}

function writeTranscript(folder, sessionID, messages) {
  const lines = [];
  for (const message of messages) {
    if (message.info?.role === "assistant" && !message.info?.time?.completed) break;
    lines.push(kept(message) + "\n");
  }
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, sessionID.replace(/[^A-Za-z0-9_-]/g, "_") + ".jsonl");
  const staged = path + ".tmp";
  writeFileSync(staged, lines.join(""), { mode: 0o600 });
  chmodSync(staged, 0o600);
  renameSync(staged, path);
  return path;
}

// Session files not written to for a month go (their sessions were captured long ago).
function prune(folder) {
  try {
    const before = Date.now() - 30 * 24 * 3600 * 1000;
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).mtimeMs < before) rmSync(path, { force: true });
    }
  } catch {
    // no folder yet
  }
}

function startCapture(payload) {
  try {
    const argv = MEMORIA.commands.capture;
    const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
    child.unref();
  } catch {
    // fail open
  }
}

export const MemoriaMemory = async ({ client, directory }) => {
  const created = new Set();
  const started = new Set();
  const transcripts = join(stateDir(), "opencode");
  if (MEMORIA.commands.capture) prune(transcripts);
  return {
    event: async ({ event }) => {
      try {
        if (event?.type === "session.created" && event.properties?.info?.id) {
          created.add(event.properties.info.id);
        }
        if (event?.type !== "session.idle" || !MEMORIA.commands.capture) return;
        const sessionID = event.properties?.sessionID;
        if (!sessionID) return;
        const answer = await client.session.messages({ path: { id: sessionID } });
        if (!Array.isArray(answer?.data)) return;
        const path = writeTranscript(transcripts, sessionID, answer.data);
        startCapture({ session_id: sessionID, transcript_path: path, cwd: directory, hook_event_name: "Stop" });
      } catch {
        // fail open: capture catches up at the next idle
      }
    },
    "chat.message": async (input, output) => {
      try {
        const sessionID = input.sessionID;
        const parts = output.parts ?? [];
        const prompt = parts
          .filter((part) => part.type === "text" && !part.synthetic)
          .map((part) => part.text)
          .join("\n");
        const asked = [];
        if (MEMORIA.commands["session-start"] && !started.has(sessionID)) {
          started.add(sessionID);
          asked.push(
            run("session-start", {
              session_id: sessionID,
              cwd: directory,
              hook_event_name: "SessionStart",
              source: created.has(sessionID) ? "startup" : "resume",
            }),
          );
        }
        if (MEMORIA.commands["user-prompt-submit"] && prompt.trim()) {
          asked.push(
            run("user-prompt-submit", {
              session_id: sessionID,
              cwd: directory,
              hook_event_name: "UserPromptSubmit",
              prompt,
            }),
          );
        }
        const texts = (await Promise.all(asked)).map(context).filter(Boolean);
        const last = parts[parts.length - 1];
        if (!last) return;
        texts.forEach((text, n) => {
          const id = nextId(last.id ?? "", n + 1);
          if (id) {
            parts.push({ id, sessionID, messageID: last.messageID, type: "text", text, synthetic: true });
          }
        });
      } catch {
        // fail open: the prompt goes on as it was
      }
    },
  };
};
