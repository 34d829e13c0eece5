/**
 * A list to pick from with type-to-search (the `/model` and `/thinking` pickers): typed
 * characters narrow the rows to those holding every word (in the value, label or description),
 * Backspace widens them again; arrows and Enter are pi-tui's `SelectList`'s.
 */
import { matchesKey, SelectList, type Component, type SelectItem } from "@mariozechner/pi-tui";
import { selectListTheme, type Palette } from "./theme.ts";

const VISIBLE = 10;

export class PickList implements Component {
  #query = "";
  #list: SelectList;

  constructor(
    private readonly items: readonly SelectItem[],
    private readonly p: Palette,
    private readonly onPick: (item: SelectItem) => void,
    /** The value to start on (the current model). */
    selected?: string,
  ) {
    this.#list = this.#build();
    const at = selected === undefined ? -1 : items.findIndex((i) => i.value === selected);
    if (at >= 0) this.#list.setSelectedIndex(at);
  }

  get query(): string {
    return this.#query;
  }

  invalidate(): void {
    this.#list.invalidate();
  }

  render(width: number): string[] {
    return [
      this.p.dim(this.#query ? `search: ${this.#query}` : "type to search · ↑↓ Enter"),
      ...this.#list.render(width),
    ];
  }

  handleInput(data: string): void {
    if (matchesKey(data, "backspace")) {
      if (this.#query) this.#narrow(this.#query.slice(0, -1));
      return;
    }
    // A printable character (one code point, no control character) searches.
    if ([...data].length === 1 && data >= " " && data !== "\x7f") {
      this.#narrow(this.#query + data);
      return;
    }
    this.#list.handleInput(data);
  }

  #narrow(query: string): void {
    this.#query = query;
    this.#list = this.#build();
  }

  #build(): SelectList {
    const words = this.#query.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = this.items.filter((i) =>
      words.every((w) => `${i.value} ${i.label} ${i.description ?? ""}`.toLowerCase().includes(w)),
    );
    const list = new SelectList(shown, VISIBLE, selectListTheme(this.p));
    list.onSelect = (item) => this.onPick(item);
    return list;
  }
}
