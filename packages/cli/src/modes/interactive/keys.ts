/**
 * Keys that act on the session, whatever has the focus: Ctrl+C (interrupt), Ctrl+D, Ctrl+O,
 * Escape, Ctrl+P / Shift+Ctrl+P / Ctrl+L / Shift+Tab (model and thinking level, `models.ts`),
 * Alt+Enter, Alt+M (the next permission mode; Shift+Tab is Pi's thinking-level key, so Claude
 * Code's key for modes is taken), then Pi extensions' shortcuts, which cannot take over mypi's
 * own keys.
 * Every other key goes to the editor or the dialog; while an extension's component is modal,
 * every key is its own.
 */
import { matchesKey } from "@mariozechner/pi-tui";
import { cycleModel, cycleThinking, openModelPicker } from "./models.ts";
import { abortRun, busy, exit } from "./run-lifecycle.ts";
import { refresh, say, sayFrom, type Interactive } from "./state.ts";
import { cycleMode } from "./mode.ts";
import { submit } from "./submit.ts";

/** Listen to the keys; returns the function that stops listening. */
export function listenToKeys(m: Interactive): () => void {
  return m.tui.addInputListener((data) => {
    if (m.modal) return undefined;
    if (matchesKey(data, "ctrl+c")) {
      interrupt(m);
      return { consume: true };
    }
    if (m.dialogs.open) return undefined;
    m.armed = false;
    return sessionKey(m, data) || shortcut(m, data) ? { consume: true } : undefined;
  });
}

/**
 * Ctrl+C (the key, or SIGINT): cancels the dialog, else clears the editor, else aborts what is
 * running; pressed again with no key in between, it exits (130).
 */
export function interrupt(m: Interactive): void {
  const { p } = m;
  if (m.dialogs.open) return m.dialogs.cancelCurrent();
  if (m.armed) return void exit(m, 130);
  if (m.input.getText()) {
    m.input.setText("");
    return refresh(m);
  }
  m.armed = true;
  if (busy(m)) {
    abortRun(m);
    say(m, p.dim("(aborting — Ctrl+C again to exit)"));
  } else {
    say(m, p.dim("(Ctrl+C again to exit, or /quit)"));
  }
}

/** mypi's own keys after Ctrl+C; true when `data` was one of them. */
function sessionKey(m: Interactive, data: string): boolean {
  if (matchesKey(data, "ctrl+d") && m.input.getText() === "") {
    void exit(m, 0);
    return true;
  }
  if (matchesKey(data, "ctrl+o")) {
    m.chat.setExpanded(!m.chat.expanded);
    refresh(m);
    return true;
  }
  if (matchesKey(data, "escape") && !m.editor.isShowingAutocomplete() && busy(m)) {
    abortRun(m);
    return true;
  }
  // Pi's keys for the model and the thinking level.
  const back = matchesKey(data, "shift+ctrl+p");
  if (back || matchesKey(data, "ctrl+p")) {
    cycleModel(m, back ? -1 : 1);
    return true;
  }
  if (matchesKey(data, "ctrl+l")) {
    openModelPicker(m);
    return true;
  }
  if (matchesKey(data, "shift+tab") && !m.editor.isShowingAutocomplete()) {
    cycleThinking(m);
    return true;
  }
  if (matchesKey(data, "alt+m")) {
    cycleMode(m);
    return true;
  }
  if (matchesKey(data, "alt+enter")) {
    const text = m.input.getText();
    m.input.setText("");
    submit(m, text, true);
    return true;
  }
  return false;
}

/** A Pi extension's shortcut (`pi.registerShortcut`); true when one took the key. */
function shortcut(m: Interactive, data: string): boolean {
  const { renderers, runShortcut } = m.options;
  const found = renderers?.()
    .shortcuts()
    .find((s) => matchesKey(data, s.key as never));
  if (!found || !runShortcut) return false;
  void runShortcut(found.key).then(
    (r) => r.error !== undefined && sayFrom(m, `shortcut ${found.key} failed: ${r.error}`, m.p.red),
  );
  return true;
}
