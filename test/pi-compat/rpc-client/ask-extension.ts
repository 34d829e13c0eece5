/**
 * A Pi extension for the RPC conformance script (`conformance.ts`), loaded with `-e` by Pi 1.6
 * and by mypi alike: `/ask` opens a confirm dialog over the wire, then tells the answer with a
 * notification.
 */
interface AskContext {
  ui: {
    confirm(title: string, message: string): Promise<boolean>;
    notify(message: string, type?: "info" | "warning" | "error"): void;
  };
}

interface AskApi {
  registerCommand(
    name: string,
    options: { description: string; handler: (args: string, ctx: AskContext) => Promise<void> },
  ): void;
}

export default function ask(pi: AskApi): void {
  pi.registerCommand("ask", {
    description: "Ask the client to confirm, then say what it answered.",
    handler: async (args, ctx) => {
      const yes = await ctx.ui.confirm("Proceed?", args || "nothing given");
      ctx.ui.notify(yes ? "confirmed" : "declined", "info");
    },
  });
}
