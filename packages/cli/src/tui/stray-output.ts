/**
 * Output that does not go through the screen while interactive mode draws it: an extension's
 * `console.log` / `console.error`, a library writing to `process.stderr`, mypi's own diagnostic
 * lines. Written straight to the terminal, it lands wherever the cursor is — across the editor,
 * half-overwritten by the next frame. While the mode runs, `process.stdout.write` and
 * `process.stderr.write` (which `console.*` use) are replaced: each complete line goes to
 * `onLine`, which shows it in the conversation, above the editor. The screen itself writes
 * through the write function it saved before (`IoTerminal`), so nothing it draws is caught.
 *
 * Output of child processes is not caught here: they write to the terminal's file descriptor,
 * not through these functions (the tools pipe their children's output anyway).
 */

type Write = typeof process.stdout.write;

interface StrayOutput {
  /** Put the original functions back; a line left unfinished goes out to its stream, now the screen is gone. */
  restore(): void;
}

export function captureStrayOutput(onLine: (line: string, stream: "stdout" | "stderr") => void): StrayOutput {
  const streams = [
    { name: "stdout" as const, stream: process.stdout, original: process.stdout.write, pending: "" },
    { name: "stderr" as const, stream: process.stderr, original: process.stderr.write, pending: "" },
  ];
  let inside = false;
  for (const s of streams) {
    const decoder = new TextDecoder();
    const write = (
      chunk: string | Uint8Array,
      encodingOrDone?: BufferEncoding | ((error?: Error | null) => void),
      done?: (error?: Error | null) => void,
    ): boolean => {
      const callback = typeof encodingOrDone === "function" ? encodingOrDone : done;
      // A line shown may make something write again (a renderer's warning): that goes out as it is.
      if (inside) return s.original.call(s.stream, chunk as string, encodingOrDone as BufferEncoding, done);
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      const lines = (s.pending + text).split("\n");
      s.pending = lines.pop() ?? "";
      inside = true;
      try {
        for (const line of lines) if (line.trim() !== "") onLine(line, s.name);
      } finally {
        inside = false;
      }
      if (callback) queueMicrotask(() => callback(null));
      return true;
    };
    s.stream.write = write as Write;
  }
  return {
    restore() {
      for (const s of streams) {
        s.stream.write = s.original;
        if (s.pending !== "") s.stream.write(s.pending);
        s.pending = "";
      }
    },
  };
}
