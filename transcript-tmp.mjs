import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
const child = spawn(process.execPath, ["/work/wt/h15/packages/cli/bin/mypi-dev.mjs", "acp", "--model", "scripted:/tmp/acpt/script.json", "-e", "permission-gate"], { cwd: "/tmp/acpt/ws", env: { ...process.env, MYPI_HOME: "/tmp/acpt/home" } });
const short = (v) => JSON.stringify(v).replace(/"sessionId":"[^"]+"/g, '"sessionId":"…"').slice(0, 260);
let n = 0;
const log = (dir, what) => console.log(`${String(++n).padStart(2)} ${dir} ${what}`);
const app = client({ name: "t" })
  .onNotification("session/update", ({ params }) => log("←", `session/update ${short(params.update)}`))
  .onRequest("session/request_permission", ({ params }) => { log("←", `session/request_permission ${short({ toolCall: { toolCallId: params.toolCall.toolCallId, title: params.toolCall.title, status: params.toolCall.status }, options: params.options })}`); const a = { outcome: { outcome: "selected", optionId: "allow" } }; log("→", `(answer) ${short(a)}`); return a; });
const conn = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const call = async (m, p) => { log("→", `${m} ${short(p)}`); const r = await conn.agent.request(m, p); log("←", `(result) ${short(r)}`); return r; };
await call("initialize", { protocolVersion: 1, clientCapabilities: {} });
const s = await call("session/new", { cwd: "/tmp/acpt/ws", mcpServers: [] });
await call("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "Change two to three in notes.txt" }] });
child.stdin.end();
child.on("close", (c) => console.log("exit", c));
