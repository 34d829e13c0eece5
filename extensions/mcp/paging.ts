/**
 * Every page of an MCP list (`tools/list`, `resources/list`, `resources/templates/list`,
 * `prompts/list`): pages are followed until the server gives no `nextCursor`, a cursor comes back
 * (pages in a circle) or `MAX_PAGES`; what was cut is said in `notes`. The items are returned as
 * sent: each list's reader checks them one by one, so one malformed item costs only itself.
 */
const MAX_PAGES = 100;

/** `fetchPage(cursor)` asks for one page (no cursor: the first). */
export async function listPages(
  fetchPage: (cursor: string | undefined) => Promise<Record<string, unknown>>,
  method: string,
  key: string,
): Promise<{ items: unknown[]; notes: string[] }> {
  const items: unknown[] = [];
  const notes: string[] = [];
  const cursors = new Set<string>();
  for (let cursor: string | undefined; ; ) {
    const page = await fetchPage(cursor);
    const list = page[key];
    if (!Array.isArray(list)) throw new Error(`its ${method} answer has no "${key}" list`);
    items.push(...list);
    const next = page.nextCursor;
    if (typeof next !== "string" || next === "") break;
    if (cursors.has(next)) {
      notes.push(`the page cursor ${JSON.stringify(next)} came back; the pages before it are used`);
      break;
    }
    if (cursors.size + 1 >= MAX_PAGES) {
      notes.push(`more than ${MAX_PAGES} pages; the first ${MAX_PAGES} are used`);
      break;
    }
    cursors.add(next);
    cursor = next;
  }
  return { items, notes };
}
