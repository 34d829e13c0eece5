import { describe, expect, expectTypeOf, it } from "vitest";
import { loadExtensions } from "../src/testing/index.ts";

describe("the testing kit's callSlot", () => {
  it("returns what a host slot's chain hands the host, typed as that (resources_discover: the paths of every handler, in order)", async () => {
    const ext = await loadExtensions(
      [
        { name: "first", factory: (pi) => pi.on("resources_discover", () => ({ skillPaths: ["skills/a"] })) },
        {
          name: "second",
          factory: (pi) => pi.on("resources_discover", () => ({ skillPaths: ["skills/b"], promptPaths: ["prompts"] })),
        },
      ],
      { cwd: "/work/project" },
    );
    try {
      const found = await ext.callSlot("resources_discover", { cwd: "/work/project", reason: "startup" });
      expectTypeOf(found).toEqualTypeOf<{ skillPaths: string[]; promptPaths: string[] } | undefined>();
      expect(found).toEqual({ skillPaths: ["skills/a", "skills/b"], promptPaths: ["prompts"] });
    } finally {
      await ext.dispose();
    }
  });
});
