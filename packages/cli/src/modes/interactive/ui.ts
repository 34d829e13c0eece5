/**
 * The extension UI of interactive mode (`ctx.ui`): dialogs (`tui/dialogs.ts`) in the editor's
 * place, notifications in the conversation, statuses in the footer, and Pi's terminal-UI members
 * (`tui/pi-ui.ts`: widgets, header, footer, custom components, editor, working line) on this screen.
 */
import { printable } from "../../render/text.ts";
import { piUIMembers } from "../../tui/pi-ui.ts";
import { addCompletion, setInput } from "./input.ts";
import { refresh, sayFrom, showInput, type Interactive, type InteractiveUI } from "./state.ts";

export function createExtensionUI(m: Interactive): InteractiveUI {
  const { tui, p, chat, footer, dialogs, layout, working } = m;
  return {
    ...piUIMembers({
      tui,
      p,
      theme: m.theme,
      chat,
      footer,
      slots: { header: layout.header, above: layout.above, below: layout.below, footer: layout.footerSlot },
      show: (component) => showInput(m, component),
      input: () => m.input,
      setInput: (replacement) => setInput(m, replacement),
      setWorking: (message) => ((working.message = message), refresh(m)),
      setWorkingIndicator: (frames) => ((working.frames = frames), refresh(m)),
      setWorkingVisible: (visible) => ((working.visible = visible), refresh(m)),
      addCompletion: (wrap) => addCompletion(m, wrap),
      pause: (paused) => ((m.modal = paused), chat.pause(paused), refresh(m)),
      error: (text) => sayFrom(m, text, p.red),
      redraw: () => tui.requestRender(),
    }),
    confirm: (title, message, opts) => dialogs.confirm(title, message, opts),
    select: (title, choices, opts) => dialogs.select(title, choices, opts),
    input: (title, placeholder, opts) => dialogs.input(title, placeholder, opts),
    editor: (title, prefill) => dialogs.editor(title, prefill),
    notify: (message, type = "info") =>
      sayFrom(m, message, type === "error" ? p.red : type === "warning" ? p.yellow : p.dim),
    setStatus: (key: string, text: string | undefined) => {
      footer.setStatus(key, text === undefined ? undefined : printable(text));
      tui.requestRender();
    },
  };
}
