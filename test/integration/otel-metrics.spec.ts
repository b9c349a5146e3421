import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { recordLockMetrics } from '../../docs/recipes/lock-metrics.js';
import { useMemoryEngine } from '../harness/test-engine.js';

/** The metrics recipe of docs/operations.md, read back through an in-memory exporter. */
describe('the OpenTelemetry metrics recipe', () => {
  const memory = useMemoryEngine();

  async function collect(run: () => Promise<void>): Promise<Map<string, MetricData>> {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const subscription = recordLockMetrics(memory.engine.events$, provider.getMeter('locks'));
    try {
      await run();
      await reader.forceFlush();
    } finally {
      subscription.unsubscribe();
      await provider.shutdown();
    }
    const metrics = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics);
    return new Map(metrics.flatMap((scope) => scope.metrics).map((m) => [m.descriptor.name, m]));
  }

  it('records wait and hold times and counts busy locks', async () => {
    const metrics = await collect(async () => {
      await memory.engine.withLock(
        'report',
        () => new Promise((resolve) => setTimeout(resolve, 20)),
      );
      const held = await memory.engine.acquire('report');
      await memory.engine.tryAcquire('report');
      await held.release();
    });
    const wait = metrics.get('lock.wait.duration') as HistogramMetricData;
    const outcomes = wait.dataPoints.map((point) => [
      point.attributes['lock.outcome'],
      point.value.count,
    ]);
    expect(outcomes.sort()).toEqual([
      ['acquired', 2],
      ['busy', 1],
    ]);
    const hold = metrics.get('lock.hold.duration') as HistogramMetricData;
    expect(hold.dataPoints[0].value.count).toBe(2);
    expect(hold.dataPoints[0].value.max).toBeGreaterThanOrEqual(15);
    expect(metrics.get('lock.busy')!.dataPoints[0].value).toBe(1);
  });
});
