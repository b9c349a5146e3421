/** Fewest slots a table keeps; a power of two, like every size it takes. */
const MIN_SLOTS = 16;

/**
 * A table from lock keys to what this process does with them, made for a new key in and out
 * on every lock. A `Map` used so costs an uncontended lock ~5% at 8 workers: with deleted
 * entries piling up it keeps replacing its backing table, and the old tables keep their
 * entries alive through the next scavenge. Here a slot is cleared as soon as its key leaves
 * (open addressing, linear probing, deletion by backward shift, so no tombstones), and the
 * arrays are replaced only when the table doubles or halves.
 */
export class KeyTable<V> {
  private keys: (string | undefined)[] = [];
  private values: (V | undefined)[] = [];
  private hashes = new Int32Array(0);
  private mask = 0;
  private count = 0;

  constructor() {
    this.resize(MIN_SLOTS);
  }

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    const slot = this.find(key, hashOf(key));
    return slot < 0 ? undefined : this.values[slot];
  }

  set(key: string, value: V): void {
    const hash = hashOf(key);
    let slot = hash & this.mask;
    for (let at = this.keys[slot]; at !== undefined; at = this.keys[slot]) {
      if (this.hashes[slot] === hash && at === key) {
        this.values[slot] = value;
        return;
      }
      slot = (slot + 1) & this.mask;
    }
    this.keys[slot] = key;
    this.values[slot] = value;
    this.hashes[slot] = hash;
    // At most half full, so that probe runs stay short.
    if (++this.count * 2 > this.keys.length) this.resize(this.keys.length * 2);
  }

  /** Removes `key` if it maps to `value` (another entry may have taken its place). */
  deleteIf(key: string, value: V): void {
    const slot = this.find(key, hashOf(key));
    if (slot < 0 || this.values[slot] !== value) return;
    this.count--;
    this.closeGap(slot);
    if (this.count * 8 < this.keys.length && this.keys.length > MIN_SLOTS) {
      this.resize(this.keys.length / 2);
    }
  }

  /** Every value, in no order. */
  entries(): V[] {
    const entries: V[] = [];
    this.keys.forEach((key, slot) => {
      if (key !== undefined) entries.push(this.values[slot]!);
    });
    return entries;
  }

  private find(key: string, hash: number): number {
    for (
      let slot = hash & this.mask;
      this.keys[slot] !== undefined;
      slot = (slot + 1) & this.mask
    ) {
      if (this.hashes[slot] === hash && this.keys[slot] === key) return slot;
    }
    return -1;
  }

  /** Empties `hole`, moving back each later key of its probe run that may fill it. */
  private closeGap(hole: number): void {
    const { keys, values, hashes, mask } = this;
    for (let slot = (hole + 1) & mask; keys[slot] !== undefined; slot = (slot + 1) & mask) {
      // A key may move back to the hole unless its home lies between the hole and its slot.
      const home = hashes[slot] & mask;
      if (((slot - home) & mask) < ((slot - hole) & mask)) continue;
      keys[hole] = keys[slot];
      values[hole] = values[slot];
      hashes[hole] = hashes[slot];
      hole = slot;
    }
    keys[hole] = undefined;
    values[hole] = undefined;
  }

  private resize(slots: number): void {
    const { keys, values } = this;
    this.keys = new Array<string | undefined>(slots).fill(undefined);
    this.values = new Array<V | undefined>(slots).fill(undefined);
    this.hashes = new Int32Array(slots);
    this.mask = slots - 1;
    this.count = 0;
    keys.forEach((key, slot) => {
      if (key !== undefined) this.set(key, values[slot]!);
    });
  }
}

/** FNV-1a over the key's UTF-16 code units. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash;
}
