import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_TOOL_NAME, ToolNamer, hashedName, mcpToolName, serverNameProblem, serverPart } from "./naming.ts";

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

describe("mcpToolName", () => {
  it("joins server and tool with a double underscore when that fits", () => {
    expect(mcpToolName("github", "create_issue")).toBe("github__create_issue");
    expect(mcpToolName("my-server", "Read-File")).toBe("my-server__Read-File");
  });

  it("replaces characters model APIs refuse with underscores", () => {
    expect(mcpToolName("docs.site", "search/pages v2")).toBe("docs_site__search_pages_v2");
  });

  it("shortens a name over 64 characters to a prefix and a hash of the original names", () => {
    const name = mcpToolName("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_overflows");
    expect(name).toMatch(/^a-very-long-server-name-for-testing__and_an_even_longer_[0-9a-f]{8}$/);
    expect(name).toHaveLength(MAX_TOOL_NAME);
    expect(mcpToolName("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_overflows")).toBe(
      name,
    );
  });

  it("gives two long names that share their first 55 characters different hashes", () => {
    const base = "x".repeat(60);
    expect(mcpToolName("s", `${base}_one`)).not.toBe(mcpToolName("s", `${base}_two`));
  });

  it("always produces a valid name, the same one for the same input (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 80 }),
        fc.string({ minLength: 1, maxLength: 120 }),
        (server, tool) => {
          const name = mcpToolName(server, tool);
          expect(name).toMatch(VALID);
          expect(mcpToolName(server, tool)).toBe(name);
        },
      ),
      { seed: 20261129 },
    );
  });
});

describe("ToolNamer", () => {
  it("gives the second of two colliding tools the hashed form, and keeps each name for the session", () => {
    const namer = new ToolNamer();
    expect(namer.nameFor("fs", "read.file")).toBe("fs__read_file");
    const second = namer.nameFor("fs", "read_file");
    expect(second).toBe(hashedName("fs", "read_file"));
    expect(second).toMatch(/^fs__read_file_[0-9a-f]{8}$/);
    expect(namer.nameFor("fs", "read.file")).toBe("fs__read_file");
    expect(namer.nameFor("fs", "read_file")).toBe(second);
  });

  it("keeps apart server x tool y__z and server x__y tool z", () => {
    const namer = new ToolNamer();
    const a = namer.nameFor("x", "y__z");
    const b = namer.nameFor("x__y", "z");
    expect(a).toBe("x__y__z");
    expect(b).not.toBe(a);
    expect(b).toMatch(VALID);
  });

  it("never hands out a reserved name", () => {
    const namer = new ToolNamer(["mcp_status", "s__t"]);
    expect(namer.nameFor("s", "t")).toBe(hashedName("s", "t"));
  });

  it("gives distinct valid names to any set of tools (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "a.", "a_", "b"), fc.string({ minLength: 1, maxLength: 70 })), {
          maxLength: 30,
        }),
        (pairs) => {
          const namer = new ToolNamer();
          const byKey = new Map<string, string>();
          for (const [server, tool] of pairs) byKey.set(`${server}\u0000${tool}`, namer.nameFor(server, tool));
          const names = [...byKey.values()];
          expect(new Set(names).size).toBe(names.length);
          for (const n of names) expect(n).toMatch(VALID);
        },
      ),
      { seed: 20261129 },
    );
  });
});

describe("server names that pass serverNameProblem", () => {
  it("refuses the server that would let server a's tool b__c take server a__b's tool c", () => {
    expect(serverNameProblem("a")).toBeUndefined();
    expect(serverNameProblem("a__b")).toMatch(/^a server name may not contain "__"/);
  });

  it("name every tool of one server apart from every tool of another, whatever the tools are called (property)", () => {
    const server = fc.stringMatching(/^[a-z._-]{1,12}$/).filter((s) => serverNameProblem(s) === undefined);
    fc.assert(
      fc.property(
        fc.uniqueArray(server, { minLength: 2, maxLength: 4, selector: serverPart }),
        fc.array(fc.string({ minLength: 1, maxLength: 70 }), { maxLength: 8 }),
        (servers, tools) => {
          const namer = new ToolNamer();
          const owner = new Map<string, string>();
          for (const s of servers) {
            for (const t of tools) {
              const name = namer.nameFor(s, t);
              expect(name.slice(0, name.indexOf("__"))).toBe(serverPart(s));
              expect(owner.get(name) ?? s).toBe(s);
              owner.set(name, s);
            }
          }
        },
      ),
      { seed: 20261206 },
    );
  });
});
