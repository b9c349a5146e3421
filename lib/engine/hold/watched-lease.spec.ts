import fc from 'fast-check';
import { CHILDREN, DueHeap, type DueEntry } from './watched-lease.js';

interface Entry extends DueEntry {
  readonly id: number;
}

type Op =
  | { readonly op: 'push'; readonly dueAt: number }
  | { readonly op: 'remove' | 'move'; readonly pick: number; readonly dueAt: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('push' as const), dueAt: fc.integer({ min: 0, max: 50 }) }),
  fc.record({
    op: fc.constantFrom('remove' as const, 'move' as const),
    pick: fc.nat(),
    dueAt: fc.integer({ min: 0, max: 50 }),
  }),
);

describe('DueHeap', () => {
  it('keeps the earliest entry on top and every slot true, whatever is added, removed or moved', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const heap = new DueHeap<Entry>();
        const model: Entry[] = [];
        let nextId = 0;
        for (const step of ops) {
          if (step.op === 'push') {
            const entry = { id: nextId++, dueAt: step.dueAt, slot: -1 };
            heap.push(entry);
            model.push(entry);
            continue;
          }
          if (model.length === 0) continue;
          const entry = model[step.pick % model.length]!;
          if (step.op === 'remove') {
            heap.remove(entry);
            model.splice(model.indexOf(entry), 1);
          } else {
            entry.dueAt = step.dueAt;
            heap.moved(entry);
          }
        }
        expect(heap.size).toBe(model.length);
        const items = heap.all();
        items.forEach((entry, slot) => {
          expect(entry.slot).toBe(slot);
          if (slot > 0) {
            const parent = items[Math.floor((slot - 1) / CHILDREN)]!;
            expect(parent.dueAt).toBeLessThanOrEqual(entry.dueAt);
          }
        });
        expect(new Set(heap.all())).toEqual(new Set(model));
        const earliest = Math.min(...model.map((entry) => entry.dueAt));
        if (model.length > 0) expect(heap.peek()!.dueAt).toBe(earliest);
      }),
      { numRuns: 300 },
    );
  });
});
