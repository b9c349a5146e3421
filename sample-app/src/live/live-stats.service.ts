import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { LockService, type LockEvent } from 'nestjs-distributed-lock';
import type { Subscription } from 'rxjs';
import { HISTOGRAM_BOUNDS_MS, type InstanceSnapshot } from './live-snapshot.js';

/** The product lock's key (`seckill:{id}`), not a buyer's own lock (`seckill:{id}:user:…`). */
const PRODUCT_LOCK = /^seckill:\d+$/;

/**
 * This process's counters for the live page: answers of the buy endpoints, and the product
 * lock's wait and hold times from the library's `events$` (the same figures the OpenTelemetry
 * recipe records), as cumulative histograms.
 */
@Injectable()
export class LiveStats implements OnModuleInit, OnModuleDestroy {
  private readonly answers: Record<string, number> = {};
  private readonly wait = new Array<number>(HISTOGRAM_BOUNDS_MS.length + 1).fill(0);
  private readonly hold = new Array<number>(HISTOGRAM_BOUNDS_MS.length + 1).fill(0);
  private storeUp = true;
  /** Product locks this process holds now: the launcher pauses an instance while it holds one. */
  private productHolds = 0;
  private subscription?: Subscription;

  constructor(private readonly locks: LockService) {}

  onModuleInit(): void {
    this.subscription = this.locks.events$.subscribe((event) => this.record(event));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /** Called by SaleCounter for every answer of a buy endpoint. */
  countAnswer(endpoint: string, status: number, code?: string): void {
    const key = code ? `${endpoint} ${status} ${code}` : `${endpoint} ${status}`;
    this.answers[key] = (this.answers[key] ?? 0) + 1;
  }

  snapshot(): InstanceSnapshot {
    return {
      name: `pid ${process.pid}`,
      pid: process.pid,
      state: this.storeUp ? 'up' : 'Redis down',
      answers: { ...this.answers },
      wait: [...this.wait],
      hold: [...this.hold],
      held: this.locks.stats().held,
    };
  }

  holdsProductLock(): boolean {
    return this.productHolds > 0;
  }

  private record(event: LockEvent): void {
    const product = event.key !== undefined && PRODUCT_LOCK.test(event.key);
    if (product && event.type === 'acquired') this.productHolds++;
    // A lock lost in a pause may also be reported released: never count below none.
    if (product && ['released', 'lost', 'expired'].includes(event.type))
      this.productHolds = Math.max(0, this.productHolds - 1);
    if (event.type === 'store-down') this.storeUp = false;
    else if (event.type === 'store-up') this.storeUp = true;
    else if (event.type === 'acquired' && PRODUCT_LOCK.test(event.key))
      this.wait[bucketOf(event.waited)]++;
    else if (event.type === 'released' && PRODUCT_LOCK.test(event.key))
      this.hold[bucketOf(event.held)]++;
  }
}

function bucketOf(ms: number): number {
  const index = HISTOGRAM_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? HISTOGRAM_BOUNDS_MS.length : index;
}
