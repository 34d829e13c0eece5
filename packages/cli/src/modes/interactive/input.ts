/**
 * The editor that has the keyboard: the built-in one (history, Tab completion of commands and
 * `@` files) or an extension's (`setEditorComponent`), which takes its place and its submit.
 * Pi extensions' `addAutocompleteProvider` wrap the completion, in the order they were added.
 */
import { errorMessage } from "@mypi/kernel";
import type { AutocompleteProvider, EditorComponent } from "@mariozechner/pi-tui";
import { SESSION_COMMANDS } from "./session-commands.ts";
import { MypiAutocomplete } from "../../tui/autocomplete.ts";
import { BUILTIN_COMMANDS } from "./slash.ts";
import { sayFrom, showInput, type Interactive } from "./state.ts";
import { submit } from "./submit.ts";

/** Give the built-in editor its completion and its submit, and the editor's place. */
export function installEditor(m: Interactive): void {
  m.editor.setAutocompleteProvider(completion(m));
  showInput(m, undefined);
  m.editor.onSubmit = (text) => submit(m, text);
}

/** An extension's editor takes the built-in one's place (undefined: the built-in one again), keeping the text typed so far. */
export function setInput(m: Interactive, replacement: EditorComponent | undefined): void {
  const text = m.input.getText();
  m.input = replacement ?? m.editor;
  m.input.onSubmit = (t) => submit(m, t);
  m.input.setAutocompleteProvider?.(completion(m));
  if (text && !m.input.getText()) m.input.setText(text);
  showInput(m, undefined);
}

/** Pi's `addAutocompleteProvider`: `wrap` wraps the completion from now on. */
export function addCompletion(m: Interactive, wrap: (current: AutocompleteProvider) => AutocompleteProvider): void {
  m.completers.push(wrap);
  m.input.setAutocompleteProvider?.(completion(m));
}

/** mypi's completion wrapped by each extension's in turn; a wrapper that throws is skipped. */
function completion(m: Interactive): AutocompleteProvider {
  const commandList = () => [
    ...BUILTIN_COMMANDS,
    ...SESSION_COMMANDS,
    ...m.session.commands().map((c) => ({ name: c.name, ...(c.description && { description: c.description }) })),
  ];
  return m.completers.reduce<AutocompleteProvider>((current, wrap) => {
    try {
      return wrap(current) ?? current;
    } catch (error) {
      sayFrom(m, `addAutocompleteProvider failed: ${errorMessage(error)}`, m.p.red);
      return current;
    }
  }, new MypiAutocomplete(commandList, m.io.cwd));
}
