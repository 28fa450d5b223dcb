// Memoria's plugin for OpenCode: written by `memoria hook install --agent opencode`, removed by
// `memoria hook uninstall --agent opencode` (edit the install, not this file).
//
// OpenCode has no command hooks; a plugin's `chat.message` hook sees each prompt before it is saved
// and sent. For every prompt this runs Memoria's hook client (`memoria-hook --agent opencode
// user-prompt-submit`, and `session-start` before a session's first prompt in this process), hands
// it Claude Code's payload on stdin, and adds the context it answers to the prompt's message as a
// synthetic text part, which the model reads and the screen does not show. The client gives up
// after its own budget and prints nothing when the server is down or slow; this file kills it after
// TIMEOUT_MS and adds nothing. It never writes to the terminal.
import { spawn } from "node:child_process";

const MEMORIA = "__MEMORIA_CONFIG__";

function run(sub, payload) {
  return new Promise((resolve) => {
    let out = "";
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
      out += chunk;
    });
    child.on("close", () => {
      clearTimeout(timer);
      resolve(out);
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

export const MemoriaMemory = async ({ directory }) => {
  const created = new Set();
  const started = new Set();
  return {
    event: async ({ event }) => {
      if (event?.type === "session.created" && event.properties?.info?.id) {
        created.add(event.properties.info.id);
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
