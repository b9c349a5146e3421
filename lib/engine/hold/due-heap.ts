/** An entry of a `DueHeap`: when it is due, and where it sits (kept by the heap). */
export interface DueEntry {
  dueAt: number;
  slot: number;
}

/** Children per node: a wide heap is shallow, and a node's children sit side by side. */
export const CHILDREN = 4;

/**
 * A min-heap of entries by `dueAt`, each knowing its slot, so that adding, removing and moving
 * one costs O(log n) and the next one due is at the top: a timer over many leases never looks at
 * the ones not due. The due times are kept again in one typed array, in heap order, so that
 * ordering reads neighbouring numbers rather than entries scattered over the heap of the
 * process: with 100,000 leases, those reads are most of what a move costs.
 */
export class DueHeap<E extends DueEntry> {
  private readonly items: E[] = [];
  private times = new Float64Array(64);

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
    const slot = this.items.length;
    if (slot === this.times.length) this.grow();
    this.items.push(entry);
    this.put(entry, slot);
    this.up(slot);
  }

  remove(entry: E): void {
    const last = this.items.pop()!;
    if (last === entry) return;
    this.put(last, entry.slot);
    this.moved(last);
  }

  /** Puts an entry whose `dueAt` changed back in order. */
  moved(entry: E): void {
    this.times[entry.slot] = entry.dueAt;
    this.up(entry.slot);
    this.down(entry.slot);
  }

  clear(): void {
    this.items.length = 0;
  }

  private up(slot: number): void {
    const { items, times } = this;
    const entry = items[slot]!;
    const at = times[slot]!;
    while (slot > 0) {
      const parent = ((slot - 1) / CHILDREN) | 0;
      if (times[parent]! <= at) break;
      this.put(items[parent]!, slot);
      slot = parent;
    }
    this.put(entry, slot);
  }

  private down(slot: number): void {
    const { items, times } = this;
    const entry = items[slot]!;
    const at = times[slot]!;
    const size = items.length;
    for (;;) {
      const first = CHILDREN * slot + 1;
      if (first >= size) break;
      let child = first;
      const end = Math.min(first + CHILDREN, size);
      for (let next = first + 1; next < end; next++) if (times[next]! < times[child]!) child = next;
      if (times[child]! >= at) break;
      this.put(items[child]!, slot);
      slot = child;
    }
    this.put(entry, slot);
  }

  private put(entry: E, slot: number): void {
    this.items[slot] = entry;
    this.times[slot] = entry.dueAt;
    entry.slot = slot;
  }

  private grow(): void {
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
  }
}
