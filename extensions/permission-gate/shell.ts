/**
 * The shell parser: tree-sitter's bash grammar, run by web-tree-sitter (both WebAssembly, shipped
 * inside their packages, so nothing is compiled or downloaded at install). Loaded once, lazily:
 * a run that never calls `bash` never pays its ~30 ms start.
 *
 * tree-sitter recovers from syntax errors by inserting ERROR or MISSING nodes; the gate treats a
 * tree holding either as unparsed (bash may still run the lines before the error).
 */
import { createRequire } from "node:module";
import { Language, Parser, type Node, type Tree } from "web-tree-sitter";

export type { Node };

let loading: Promise<Parser> | undefined;

/** The parser, loaded on first use; a failed load is retried by the next call. */
export function loadShellParser(): Promise<Parser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    await Parser.init();
    const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * Parse `text` and hand the root to `use`, freeing the tree's WebAssembly memory afterwards
 * (nodes are not valid past `use`).
 */
export function withTree<T>(parser: Parser, text: string, use: (root: Node) => T): T {
  const tree: Tree | null = parser.parse(text);
  if (!tree) throw new Error("the shell parser returned no tree");
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}

/** The first ERROR or MISSING node, as a short description, or undefined when the tree is clean. */
export function syntaxError(root: Node): string | undefined {
  if (!root.hasError) return undefined;
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.isMissing) return `a missing "${node.type}" at offset ${node.startIndex}`;
    if (node.type === "ERROR") return `a syntax error at offset ${node.startIndex} ("${node.text.slice(0, 20)}")`;
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child?.hasError || child?.isMissing) stack.push(child);
    }
  }
  return "a syntax error";
}
