// docs/internals.md#extension-api: the seams any layer may fill (`manager.adapt`), the ones Pi compatibility uses.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ExtensionManager, type ManagerAdapter } from "../src/index.ts";
import { recorder } from "./helpers.ts";

const readCall = () => ({ toolCallId: "c1", toolName: "read", input: { path: "a.txt" } });

describe("a layer's adapter", () => {
  it("adds a field to slot events, reads its own answer shape and shows observers its view, in the order adapters were added", async () => {
    const manager = new ExtensionManager({ piCompat: false });
    const seen: unknown[] = [];
    const observed: unknown[] = [];
    manager.adapt({
      slotEvent: (slot, event) => (slot === "tool_call" ? { ...event, dialect: "ours" } : undefined),
      // Our dialect answers `{deny: reason}`; mypi's tool_call policy reads `{block, reason}`.
      wrapHandler: (slot, handler) =>
        slot === "tool_call"
          ? (event, ctx, next) => {
              const answer: unknown = handler(event, ctx, next);
              const deny = (answer as { deny?: unknown } | undefined)?.deny;
              return typeof deny === "string" ? { block: true, reason: deny } : (answer as never);
            }
          : undefined,
      observed: (event) => (event.type === "turn_start" ? { ...event, ours: true } : undefined),
    });
    manager.adapt({ observed: (event) => (event.type === "turn_start" ? { ...event, second: true } : undefined) });
    await manager.loadExtension((pi) => {
      pi.on("tool_call", (event) => {
        seen.push((event as { dialect?: unknown }).dialect);
        return { deny: "not in our dialect" } as never;
      });
      pi.on("turn_start", (event) => void observed.push(event));
    }, "ours");

    const r = recorder();
    expect(await manager.runSlot("tool_call", readCall(), r.call)).toMatchObject({
      block: true,
      reason: "not in our dialect",
    });
    expect(seen).toEqual(["ours"]);
    expect(r.decisions()).toEqual([["ours", "block"]]);

    manager.publish({ type: "turn_start", turnIndex: 0, timestamp: 1 });
    await manager.drain();
    expect(observed).toEqual([{ type: "turn_start", turnIndex: 0, timestamp: 1, ours: true, second: true }]);
  });

  it("gives extensions its modules and members of pi, ctx and a command's ctx", async () => {
    const manager = new ExtensionManager({ piCompat: false });
    const adapter: ManagerAdapter = {
      modules: { "our-sdk": { answer: 42 } },
      extendApi: (pi, extension) => Object.assign(pi, { dialect: () => `${extension.name}:${extension.attached()}` }),
      extendContext: (ctx) => Object.assign(ctx, { dialect: "ours" }),
      extendCommandContext: (ctx, extension) => Object.assign(ctx, { commandOf: extension }),
    };
    manager.adapt(adapter);
    const got: unknown[] = [];
    await manager.loadExtension((pi) => {
      const api = pi as unknown as { dialect(): string };
      got.push(api.dialect());
      pi.registerCommand("probe", {
        handler: (_args, ctx) => {
          const c = ctx as unknown as { dialect?: string; commandOf?: string };
          got.push(c.dialect, c.commandOf, api.dialect());
        },
      });
    }, "user");
    expect(await manager.runCommand("probe")).toEqual({ ran: true });
    expect(got).toEqual(["user:false", "ours", "user", "user:true"]);

    const dir = mkdtempSync(join(tmpdir(), "mypi-adapter-"));
    writeFileSync(
      join(dir, "imports.ts"),
      `import { answer } from "our-sdk";\nexport default (pi: { registerFlag(n: string, o: object): void }) => pi.registerFlag("answer-" + answer, { type: "boolean" });\n`,
    );
    expect((await manager.load([join(dir, "imports.ts")])).failed).toEqual([]);
    expect(manager.getFlags().map((f) => f.name)).toContain("answer-42");
  });

  it("leaves Pi compatibility off the manager with piCompat: false, and on it by default", () => {
    expect(new ExtensionManager({ piCompat: false }).piCompat).toBeUndefined();
    const compat = new ExtensionManager().piCompat;
    expect(compat?.renderers.shortcuts()).toEqual([]);
    expect(compat?.providers.list()).toEqual([]);
  });
});
