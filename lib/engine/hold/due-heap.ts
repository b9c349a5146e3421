/** An entry of a `DueHeap`: when it is due, and where it sits (kept by the heap). */
export interface DueEntry {
  dueAt: number;
  slot: number;
}

/**
 * A binary min-heap of entries by `dueAt`, each knowing its slot, so that adding, removing and
 * moving one costs O(log n) and the next one due is at the top: a timer over many leases never
 * looks at the ones not due.
 */
export class DueHeap<E extends DueEntry> {
  private readonly items: E[] = [];

  get size(): number {
    return this.items.length;
  }

  /** Every entry, in no order. */
  all(): readonly E[] {
    return this.items;
  }

  peek(): E | undefined {
    return this.items[0];
  }

  push(entry: E): void {
    entry.slot = this.items.length;
    this.items.push(entry);
    this.up(entry.slot);
  }

  remove(entry: E): void {
    const last = this.items.pop()!;
    if (last === entry) return;
    this.items[entry.slot] = last;
    last.slot = entry.slot;
    this.moved(last);
  }

  /** Puts `next` where `entry` is, due at the same time. */
  replace(entry: E, next: E): void {
    next.slot = entry.slot;
    next.dueAt = entry.dueAt;
    this.items[next.slot] = next;
  }

  /** Puts an entry whose `dueAt` changed back in order. */
  moved(entry: E): void {
    this.up(entry.slot);
    this.down(entry.slot);
  }

  clear(): void {
    this.items.length = 0;
  }

  private up(slot: number): void {
    const { items } = this;
    const entry = items[slot]!;
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      if (items[parent]!.dueAt <= entry.dueAt) break;
      this.put(items[parent]!, slot);
      slot = parent;
    }
    this.put(entry, slot);
  }

  private down(slot: number): void {
    const { items } = this;
    const entry = items[slot]!;
    const size = items.length;
    for (;;) {
      let child = 2 * slot + 1;
      if (child >= size) break;
      if (child + 1 < size && items[child + 1]!.dueAt < items[child]!.dueAt) child++;
      if (items[child]!.dueAt >= entry.dueAt) break;
      this.put(items[child]!, slot);
      slot = child;
    }
    this.put(entry, slot);
  }

  private put(entry: E, slot: number): void {
    this.items[slot] = entry;
    entry.slot = slot;
  }
}
