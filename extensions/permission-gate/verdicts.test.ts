import { describe, expect, it } from "vitest";
import { judge } from "./index.ts";
import { VARIANT_RULES, VARIANTS, type Variant } from "./variants.ts";

describe("permission-gate verdicts on the 112 variants of issue 23", () => {
  it("gives every variant its verdict: the nine real bypasses ask, deny rules hold through wrappers and quotes, everyday commands pass", async () => {
    const got: Variant[] = [];
    for (const [command] of VARIANTS) got.push([command, (await judge(command, VARIANT_RULES)).verdict]);
    expect(got).toEqual(VARIANTS);
  });
});
