/** Which dialogs become ACP permission requests, and how an option maps back onto the dialog's answer. */
import { describe, expect, it } from "vitest";
import { permissionChoices } from "../src/modes/acp/permission.ts";

describe("permissionChoices", () => {
  it("offers a confirm as Allow once / Reject once, and only Allow answers yes", () => {
    const choices = permissionChoices({ kind: "confirm" })!;
    expect(choices.options).toEqual([
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    expect([choices.answer("allow"), choices.answer("reject"), choices.answer("made-up")]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("maps a scoped allow/deny select onto ACP's kinds and answers with the label picked", () => {
    const options = ["Allow once", "Allow for this session", "Always allow in this project", "Deny", "Deny always"];
    const choices = permissionChoices({ kind: "select", options })!;
    expect(choices.options.map((o) => [o.name, o.kind])).toEqual([
      ["Allow once", "allow_once"],
      ["Allow for this session", "allow_always"],
      ["Always allow in this project", "allow_always"],
      ["Deny", "reject_once"],
      ["Deny always", "reject_always"],
    ]);
    expect(choices.answer(choices.options[2]!.optionId)).toBe("Always allow in this project");
    expect(choices.answer("option-99")).toBeUndefined();
  });

  it("leaves a select that is not about permission, or offers no way to refuse, to the other dialogs", () => {
    expect(permissionChoices({ kind: "select", options: ["red", "green"] })).toBeUndefined();
    expect(permissionChoices({ kind: "select", options: ["Allow once", "Allow always"] })).toBeUndefined();
    expect(permissionChoices({ kind: "select", options: ["Allow", "Pick a colour"] })).toBeUndefined();
  });
});
