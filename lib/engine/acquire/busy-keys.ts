import type { LockKind } from '../../stores/lock-store.interface.js';
/**
 * The acquirer's table of the keys this process is busy with: a `Map` from key to a slot
 * number, and the entries in an array of slots that are cleared and reused.
 *
 * Why not a `Map` of the entries themselves: most locks set and delete an entry, and such a
 * `Map` rebuilds its table every few entries. V8 puts the new table of a long-lived `Map` in the
 * old generation and keeps the old one, with every entry it held, until the next full GC, so
 * each young collection kept the entries of locks long released and moved them to the old
 * generation, several times what a raw client promotes (see "Design decisions these figures
 * rest on" in bench/RESULTS.md). Slot numbers are small integers, which hold nothing, and a
 * cleared slot lets its entry go.
 */
export class BusyKeys<V extends object> {
  private readonly slotOf = new Map<string, number>();
  private readonly slots: (V | undefined)[] = [];
  private readonly freeSlots: number[] = [];

  get size(): number {
    return this.slotOf.size;
  }

  get(key: string): V | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.slots[slot];
  }

  set(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot !== undefined) {
      this.slots[slot] = entry;
      return;
    }
    const free = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slots.length;
    this.slots[free] = entry;
    this.slotOf.set(key, free);
  }

  /** Drops `key` if its entry is still `entry` (another may have taken its place). */
  deleteIf(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined || this.slots[slot] !== entry) return;
    this.slotOf.delete(key);
    this.slots[slot] = undefined;
    this.freeSlots.push(slot);
    // After a burst of many keys at once, let the grown arrays go.
    if (this.slotOf.size === 0 && this.slots.length > 1024) {
      this.slots.length = 0;
      this.freeSlots.length = 0;
    }
  }

  values(): V[] {
    return [...this.slotOf.values()].map((slot) => this.slots[slot]!);
  }
}

/**
 * One queue per set of keys (in the caller's order), per kind (and limit) and per engine. Readers and
 * writers of one key queue apart: the store decides between them.
 */
export function queueKey({
  fullKeys,
  kind,
}: {
  fullKeys: readonly string[];
  kind: LockKind;
}): string {
  if (kind.type === 'semaphore') return `${fullKeys[0]}\nsemaphore ${kind.limit}`;
  if (kind.type !== 'mutex') return `${fullKeys[0]}\n${kind.type}`;
  return fullKeys.length === 1 ? fullKeys[0] : fullKeys.join('\n');
}
