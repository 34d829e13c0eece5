/**
 * The shell parser: tree-sitter's bash grammar, run by web-tree-sitter (both WebAssembly, shipped
 * inside their packages, so nothing is compiled or downloaded at install). Loaded once, lazily:
 * a run that never calls `bash` never pays its ~30 ms start.
 *
 * tree-sitter recovers from syntax errors by inserting ERROR or MISSING nodes; the gate treats a
 * tree holding either as unparsed (bash may still run the lines before the error).
 */
import { createRequire } from "node:module";
import { Language, Parser, type Tree } from "web-tree-sitter";

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
 * A node of the syntax tree, copied out of the parser's WebAssembly memory in one cursor walk:
 * reading plain objects costs a fraction of crossing into WebAssembly for every child and text,
 * and the copy outlives the tree.
 */
export class Node {
  readonly children: Node[] = [];
  parent: Node | null = null;
  hasError: boolean;

  constructor(
    /** The whole parsed text. */
    readonly source: string,
    readonly type: string,
    readonly isNamed: boolean,
    readonly isMissing: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
    /** The field this node fills in its parent (`name`, `argument` …). */
    readonly field: string | null,
  ) {
    this.hasError = type === "ERROR" || isMissing;
  }

  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }

  get namedChildren(): Node[] {
    return this.children.filter((c) => c.isNamed);
  }

  childForFieldName(field: string): Node | null {
    return this.children.find((c) => c.field === field) ?? null;
  }

  childrenForFieldName(field: string): Node[] {
    return this.children.filter((c) => c.field === field);
  }

  /** Every node below this one of one of `types`, in document order. */
  descendantsOfType(types: string | readonly string[]): Node[] {
    const wanted = typeof types === "string" ? [types] : types;
    const out: Node[] = [];
    const visit = (n: Node) => {
      for (const c of n.children) {
        if (wanted.includes(c.type)) out.push(c);
        visit(c);
      }
    };
    visit(this);
    return out;
  }
}

/** Parse `text` and hand the root to `use`; the parser's tree is freed before `use` runs. */
export function withTree<T>(parser: Parser, text: string, use: (root: Node) => T): T {
  const tree: Tree | null = parser.parse(text);
  if (!tree) throw new Error("the shell parser returned no tree");
  let root: Node;
  try {
    root = copyTree(tree, text);
  } finally {
    tree.delete();
  }
  return use(root);
}

function copyTree(tree: Tree, source: string): Node {
  const cursor = tree.walk();
  try {
    const make = (parent: Node | null): Node => {
      const node = new Node(
        source,
        cursor.nodeType,
        cursor.nodeIsNamed,
        cursor.nodeIsMissing,
        cursor.startIndex,
        cursor.endIndex,
        cursor.currentFieldName,
      );
      node.parent = parent;
      if (cursor.gotoFirstChild()) {
        do {
          const child = make(node);
          node.children.push(child);
          if (child.hasError) node.hasError = true;
        } while (cursor.gotoNextSibling());
        cursor.gotoParent();
      }
      return node;
    };
    return make(null);
  } finally {
    cursor.delete();
  }
}

/** The first ERROR or MISSING node, as a short description, or undefined when the tree is clean. */
export function syntaxError(root: Node): string | undefined {
  if (!root.hasError) return undefined;
  let node = root;
  for (;;) {
    if (node.isMissing) return `a missing "${node.type}" at offset ${node.startIndex}`;
    if (node.type === "ERROR") return `a syntax error at offset ${node.startIndex} ("${node.text.slice(0, 20)}")`;
    const next = node.children.find((c) => c.hasError);
    if (!next) return "a syntax error";
    node = next;
  }
}
