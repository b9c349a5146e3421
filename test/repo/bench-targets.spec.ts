import { checkTargets } from '../../bench/targets.js';
import { parseOptions } from '../../bench/options.js';
import type { CellResult, ScenarioResult } from '../../bench/results.js';

/*
 * Issue 43's bench targets: each client library's library against that client's raw and its
 * peers there, and the hand-off against 407040a; a miss says why with both sides' figures.
 */

type Row = [contender: string, ratioToRaw: number];

function uncontendedCell(client: string, workers: number, rows: Row[]): CellResult {
  return {
    cell: `C=${workers} ${client}`,
    params: { workers },
    client,
    results: rows.map(([contender, ratioToRaw]) => {
      const figures = {
        ratioToRaw,
        cmdsPerCycle: contender === 'redlock-universal' ? 5 : 4,
        topLevelPerCycle: contender === 'redlock-universal' ? 3 : 2,
        cpuUsPerCycle: 100 * ratioToRaw,
        redisCpuUsPerCycle: 20,
      };
      return { contender, settings: '', figures, reps: [figures] };
    }),
  };
}

const uncontended: ScenarioResult = {
  id: 1,
  title: 'Uncontended',
  notes: [],
  cells: [
    uncontendedCell('glide', 1, [
      ['library', 0.93],
      ['redlock-universal', 0.6],
      ['raw', 1],
    ]),
    uncontendedCell('glide', 8, [
      ['library', 0.9],
      ['redlock-universal', 0.95],
      ['raw', 1],
    ]),
  ],
};

function handOffs(current: number, old: number): ScenarioResult {
  const figures = (p50: number) => ({
    handOffP50: p50,
    handOffP99: 2 * p50,
    ratioToOldP50: p50 / old,
  });
  return {
    id: 10,
    title: 'Hand-off',
    notes: [],
    cells: [
      {
        cell: '120 hand-offs',
        params: { handOffs: 120 },
        results: [
          { contender: 'current', settings: '', figures: figures(current), reps: [] },
          { contender: '407040a', settings: '', figures: figures(old), reps: [] },
        ],
      },
    ],
  };
}

describe('the bench targets of issue 43', () => {
  const checks = checkTargets([uncontended], 1);
  const row = (target: string) => checks.find((check) => check.target === target);

  it('hold the library to the raw client of its own client library at C = 1', () => {
    expect(row('glide C=1: ≥ 0.95× raw on glide')).toMatchObject({ pass: false });
    // Issue 6's targets at C = 8 and its anchors are ioredis's alone.
    expect(row('glide C=8: ≥ 0.95× raw on glide')).toBeUndefined();
    expect(checks.some((check) => check.anchor)).toBe(false);
  });

  it('put the library ahead of every peer on that client at C = 8, and say why it is not', () => {
    const ahead = row('glide C=8: ahead of every peer (× raw)');
    expect(ahead).toMatchObject({ pass: false });
    expect(ahead!.measured).toContain('0.90 vs redlock-universal 0.95');
    expect(ahead!.measured).toContain('library vs redlock-universal: cmds 4.0 vs 5.0');
    expect(ahead!.measured).toContain('CPU µs 90.0 vs 95.0');
    expect(row('glide C=1: ahead of every peer (× raw)')).toBeUndefined();
  });

  it('compare the hand-off with 407040a at p50 and p99', () => {
    const better = checkTargets([handOffs(0.6, 0.7)], 1).filter((check) => check.scenario === 10);
    expect(better.map((check) => [check.target, check.pass])).toEqual([
      ['release to grant p50: current ≤ 407040a', true],
      ['release to grant p99: current ≤ 407040a', true],
    ]);
    const worse = checkTargets([handOffs(0.8, 0.7)], 1).filter((check) => check.scenario === 10);
    expect(worse.every((check) => check.pass === false)).toBe(true);
    expect(worse[0].measured).toContain('0.800 vs 0.700 ms');
    expect(worse[0].measured).toContain('per hand-off, current vs 407040a');
  });
});

describe('the bench flags', () => {
  it('narrow the clients and contenders, in their canonical order, and write no RESULTS.md', () => {
    const options = parseOptions([
      '--client',
      'glide',
      '--client',
      'ioredis',
      '--contender',
      'raw',
    ]);
    expect(options.clients).toEqual(['ioredis', 'glide']);
    expect(options.contenders).toEqual(['raw']);
    expect(options.writeResults).toBe(false);
  });

  it('run every scenario, client and contender by default, 10 after 9', () => {
    const options = parseOptions([]);
    expect(options.scenarios.at(-1)).toBe(10);
    expect(options.clients).toEqual(['ioredis', 'node-redis', 'glide']);
    expect(options.contenders).toContain('@sesamecare-oss/redlock');
    expect(options.writeResults).toBe(true);
    expect(parseOptions(['--scenario', '10', '--scenario', '2']).scenarios).toEqual([2, 10]);
  });
});
