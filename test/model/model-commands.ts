/**
 * The generators: random sequences of ops over 2–4 services, as fast-check commands. Weights
 * aim at reaching every option and fault with fair odds in a run of a few dozen steps; nothing
 * here knows a particular defect.
 */
import fc from 'fast-check';
import type { Capability } from './model-backend.js';
import type { Op, RunSetup, TakeOp, TakeOptions } from './model-ops.js';
import { describeOp } from './model-ops.js';
import { worldMovesArb } from './move-arbs.js';
import type { World } from './model-world.js';

/** What a command may assume: which services exist, run in a child, and are still alive. */
export interface ModelState {
  readonly services: number;
  readonly inChild: readonly boolean[];
  readonly dead: Set<number>;
}

/** One step; its `toString` is the op's line in a printed sequence. */
export class Step implements fc.AsyncCommand<ModelState, World, false> {
  /** Steps run so far in this process, for the runner's counts. */
  static executed = 0;

  constructor(readonly op: Op) {}

  check(model: Readonly<ModelState>): boolean {
    if (!('svc' in this.op)) return true;
    const { svc } = this.op;
    if (svc >= model.services || model.dead.has(svc)) return false;
    return (this.op.type !== 'kill' && this.op.type !== 'pause') || model.inChild[svc]!;
  }

  async run(model: ModelState, world: World): Promise<void> {
    Step.executed++;
    if (this.op.type === 'kill') model.dead.add(this.op.svc);
    await world.apply(this.op);
    await world.check();
  }

  toString(): string {
    return describeOp(this.op);
  }
}

/** Key groups: a multi-key lock takes keys of one group (one hash slot on a Cluster). */
export interface KeySpace {
  readonly groups: readonly (readonly string[])[];
}

const svcArb = fc.integer({ min: 0, max: 3 });

function optionsArb(kind: 'any' | 'mutex'): fc.Arbitrary<TakeOptions> {
  const kinds =
    kind === 'mutex'
      ? fc.constant({})
      : fc.oneof(
          { weight: 5, arbitrary: fc.constant({}) },
          { weight: 2, arbitrary: fc.record({ limit: fc.integer({ min: 1, max: 3 }) }) },
          { weight: 2, arbitrary: fc.constant({ mode: 'read' as const }) },
          { weight: 2, arbitrary: fc.constant({ mode: 'write' as const }) },
        );
  const maybe = <T>(weight: number, arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
    fc.oneof(
      { weight: 10 - weight, arbitrary: fc.constant(undefined) },
      { weight, arbitrary: arb },
    );
  return fc
    .record({
      kind: kinds,
      ttl: maybe(7, fc.integer({ min: 100, max: 3_000 })),
      wait: fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 50, max: 3_000 })),
      // Short bounds as often as long ones: a maxHold below the ttl is the common use.
      maxHold: maybe(
        3,
        fc.oneof(fc.integer({ min: 50, max: 400 }), fc.integer({ min: 400, max: 2_000 })),
      ),
      minHold: maybe(2, fc.integer({ min: 50, max: 500 })),
      autoRenew: fc.constantFrom(undefined, true, false),
      fencing: maybe(3, fc.constant(true)),
    })
    .map(({ kind, minHold, maxHold, fencing, ...rest }) => {
      const options: TakeOptions = { ...rest, ...kind, maxHold };
      if (minHold !== undefined && (maxHold === undefined || minHold <= maxHold))
        options.minHold = minHold;
      if (fencing && options.mode !== 'read') options.fencing = true;
      return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    });
}

/** A key of `group`, the first ones likelier: contention is where locks get interesting. */
function keyOf(group: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    ...group.map((key, i) => ({ weight: group.length - i, arbitrary: fc.constant(key) })),
  );
}

function keysArb(space: KeySpace, multi: boolean): fc.Arbitrary<string[]> {
  return fc
    .constantFrom(...space.groups)
    .chain((group) =>
      multi && group.length > 1
        ? fc.shuffledSubarray([...group], { minLength: 2, maxLength: 2 })
        : keyOf(group).map((key) => [key]),
    );
}

function takeArb(space: KeySpace): fc.Arbitrary<TakeOp> {
  const single = fc.tuple(keysArb(space, false), optionsArb('any'));
  const multi = fc.tuple(keysArb(space, true), optionsArb('mutex'));
  return fc
    .record({
      svc: svcArb,
      api: fc.constantFrom('acquire', 'tryAcquire', 'withLock', 'decorator') as fc.Arbitrary<
        TakeOp['api']
      >,
      target: fc.oneof({ weight: 4, arbitrary: single }, { weight: 1, arbitrary: multi }),
      holdMs: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 200, max: 1_500 })),
      // `freq: 2`: present in half the takes (fast-check builds null once in `freq`).
      nest: fc.option(fc.tuple(fc.boolean(), keysArb(space, false), optionsArb('mutex')), {
        freq: 2,
      }),
      onAbortTake: fc.option(keysArb(space, false), { freq: 2 }),
      // One in eight holders does not listen to its signal: it acts after its lease.
      deaf: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
    })
    .map(({ svc, api, target: [keys, opts], holdMs, nest, onAbortTake, deaf }): TakeOp => ({
      type: 'take',
      svc,
      api,
      keys,
      opts,
      holdMs,
      // Reentrant: the same keys and kind; otherwise a mutex on another key.
      ...(nest
        ? {
            nest: nest[0] ? { keys, opts: { ...opts, wait: 0 } } : { keys: nest[1], opts: nest[2] },
          }
        : {}),
      ...(onAbortTake ? { onAbortTake: onAbortTake[0]! } : {}),
      ...(deaf && { deaf }),
    }));
}

function loopArb(space: KeySpace): fc.Arbitrary<Op> {
  return fc.record({
    type: fc.constant('loop' as const),
    svc: svcArb,
    key: keysArb(space, false).map((keys) => keys[0]!),
    opts: fc
      .record({
        wait: fc.integer({ min: 300, max: 3_000 }),
        mode: fc.constantFrom(undefined, 'write' as const),
      })
      .map((o) => (o.mode ? o : { wait: o.wait })),
    workers: fc.integer({ min: 1, max: 3 }),
    rounds: fc.integer({ min: 5, max: 150 }),
    holdMs: fc.integer({ min: 0, max: 5 }),
  });
}

/** What a target offers the generator: its keys, what its backend can do, its child processes. */
export interface TargetMoves {
  readonly space: KeySpace;
  readonly can: readonly Capability[];
  readonly children: boolean;
  /** The commands a revoke may take away from the services' user. */
  readonly revocable: readonly string[];
}

export function commandsArb(target: TargetMoves, maxCommands: number) {
  const { space } = target;
  const faults: readonly string[] = [...target.can, ...(target.children ? ['kill', 'pause'] : [])];
  const has = (fault: string): number => (faults.includes(fault) ? 1 : 0);
  const slot = fc.integer({ min: 0, max: 3 });
  const ops: { weight: number; arbitrary: fc.Arbitrary<Op> }[] = [
    { weight: 40, arbitrary: takeArb(space) },
    { weight: 4, arbitrary: loopArb(space) },
    {
      weight: 8,
      arbitrary: fc.record({ type: fc.constant('release' as const), svc: svcArb, slot }),
    },
    {
      weight: 8,
      arbitrary: fc
        .record({
          svc: svcArb,
          slot,
          ttl: fc.integer({ min: 50, max: 5_000 }),
          // Half near the end of the lease, where a deadline that does not follow shows.
          atLeft: fc.option(fc.integer({ min: 5, max: 300 }), { freq: 2, nil: undefined }),
        })
        .map(({ atLeft, ...rest }) => ({
          type: 'extend' as const,
          ...rest,
          ...(atLeft !== undefined && { atLeft }),
        })),
    },
    { weight: 5, arbitrary: fc.record({ type: fc.constant('abort' as const), svc: svcArb, slot }) },
    {
      weight: 14,
      arbitrary: fc.record({
        type: fc.constant('sleep' as const),
        ms: fc.integer({ min: 20, max: 800 }),
      }),
    },
    {
      weight: 4 * has('delay'),
      arbitrary: fc.record({
        type: fc.constant('delay' as const),
        svc: svcArb,
        ms: fc.integer({ min: 100, max: 800 }),
        forMs: fc.integer({ min: 200, max: 1_500 }),
      }),
    },
    { weight: 2 * has('drop'), arbitrary: fc.constant({ type: 'drop' as const }) },
    {
      weight: 2 * has('kill'),
      arbitrary: fc.record({ type: fc.constant('kill' as const), svc: svcArb }),
    },
    {
      weight: 3 * has('pause'),
      arbitrary: fc.record({
        type: fc.constant('pause' as const),
        svc: svcArb,
        ms: fc.integer({ min: 200, max: 2_000 }),
      }),
    },
    ...worldMovesArb({ key: keysArb(space, false).map((keys) => keys[0]!), revocable: target.revocable }, target.can), // prettier-ignore
  ];
  const steps = fc.oneof(...ops.filter(({ weight }) => weight > 0)).map((op) => new Step(op));
  return fc.commands([steps], { maxCommands, size: 'max' });
}

/** Module options per service; `children` says whether the target can run services in one. */
export function setupArb(children: boolean): fc.Arbitrary<RunSetup> {
  const service = fc.record({
    pollCap: fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 50, max: 1_000 }) },
      // A user can pass any positive number here; tenths make a fraction likely.
      { weight: 1, arbitrary: fc.integer({ min: 500, max: 4_000 }).map((n) => n / 10) },
    ),
    // Mostly on: hand-offs in a process are where a lease is passed on without Redis.
    localHandoffs: fc.oneof(
      { weight: 1, arbitrary: fc.constant(0) },
      { weight: 4, arbitrary: fc.constantFrom(1, 2, 4, 16) },
    ),
    child: children ? fc.boolean() : fc.constant(false),
  });
  return fc.record({ services: fc.array(service, { minLength: 2, maxLength: 4 }) });
}
