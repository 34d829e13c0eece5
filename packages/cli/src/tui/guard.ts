/**
 * A component an extension built, made safe to draw: each line it renders is cut to the width,
 * and a `render` or `handleInput` that throws is reported once and draws one error line.
 *
 * Without this a single line too wide makes pi-tui stop the terminal, write every line on screen
 * (the conversation, secrets and all) to a crash file under ~/.pi, and throw from its render
 * timer — the whole session lost for one extension's bug.
 */
import { errorMessage } from "@mypi/kernel";
import { truncateToWidth, visibleWidth, type Component } from "@mariozechner/pi-tui";

export function guarded<T extends Component>(component: T, report: (error: string) => void, name: string): T {
  let reported = false;
  const fail = (what: string, error: unknown) => {
    const text = `${name}: ${what} failed: ${errorMessage(error)}`;
    // Reported after the frame: the report adds to the screen, which is being drawn right now.
    if (!reported) queueMicrotask(() => report(text));
    reported = true;
    return text;
  };
  return new Proxy(component, {
    get(target, prop, receiver) {
      if (prop === "render") {
        return (width: number) => {
          try {
            const lines = target.render.call(receiver, width);
            return Array.isArray(lines)
              ? lines.map((l) => (typeof l !== "string" ? "" : visibleWidth(l) > width ? truncateToWidth(l, width) : l))
              : [];
          } catch (error) {
            return [truncateToWidth(`⚠ ${fail("render", error)}`, width)];
          }
        };
      }
      if (prop === "handleInput" && typeof target.handleInput === "function") {
        return (data: string) => {
          try {
            target.handleInput!.call(receiver, data);
          } catch (error) {
            fail("handleInput", error);
          }
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}
