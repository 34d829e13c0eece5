/**
 * The one way skills and prompt templates are gathered: each source's files in order, a file
 * reached twice read once, and of two items with the same name the first kept (a warning
 * names both files), so the order of the sources decides who wins.
 */
export interface Named {
  name: string;
  path: string;
}

export function collectByName<S, T extends Named>(options: {
  sources: readonly S[];
  filesOf: (source: S) => string[];
  read: (file: string, source: S) => T | undefined;
  clash: (item: T, first: T) => string;
  warn: (message: string) => void;
}): T[] {
  const items: T[] = [];
  const byName = new Map<string, T>();
  const seenFiles = new Set<string>();
  for (const source of options.sources) {
    for (const file of options.filesOf(source)) {
      if (seenFiles.has(file)) continue;
      seenFiles.add(file);
      const item = options.read(file, source);
      if (!item) continue;
      const first = byName.get(item.name);
      if (first) {
        options.warn(options.clash(item, first));
        continue;
      }
      byName.set(item.name, item);
      items.push(item);
    }
  }
  return items;
}
