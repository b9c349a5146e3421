import {
  Controller,
  Get,
  Inject,
  Query,
  Sse,
  type MessageEvent,
  type OnModuleDestroy,
} from '@nestjs/common';
import { exhaustMap, interval, startWith, Subject, takeUntil, type Observable } from 'rxjs';
import { REDIS, type DataRedis } from '../redis/redis.module.js';
import { LiveStats } from './live-stats.service.js';
import { readProductCounts } from './product-counts.js';
import {
  HISTOGRAM_BOUNDS_MS,
  LIVE_PRODUCT_ID,
  LIVE_TICK_MS,
  type LiveSnapshot,
} from './live-snapshot.js';

/** This instance's live snapshot stream, for the page at `/` and for the launcher's hub. */
@Controller('live')
export class LiveController implements OnModuleDestroy {
  /**
   * Ends the open streams when the app closes: an endless response would otherwise hold the
   * HTTP server's close, and with it the shutdown.
   */
  private readonly closing = new Subject<void>();

  constructor(
    private readonly stats: LiveStats,
    @Inject(REDIS) private readonly redis: DataRedis,
  ) {}

  @Sse('events')
  events(@Query('product') product?: string): Observable<MessageEvent> {
    const productId = Number(product) > 0 ? Number(product) : LIVE_PRODUCT_ID;
    return interval(LIVE_TICK_MS).pipe(
      startWith(0),
      // A tick that comes while the previous read is still out is skipped, not queued.
      exhaustMap(async () => ({ data: await this.snapshot(productId) })),
      takeUntil(this.closing),
    );
  }

  /**
   * Whether this process holds the product lock right now: the launcher's pause waits for it, so
   * that the stop lands inside the critical section, as a long GC pause can.
   */
  @Get('holding')
  holding(): { productLock: boolean } {
    return { productLock: this.stats.holdsProductLock() };
  }

  onModuleDestroy(): void {
    this.closing.next();
  }

  private async snapshot(productId: number): Promise<LiveSnapshot> {
    return {
      at: Date.now(),
      controls: false,
      bounds: HISTOGRAM_BOUNDS_MS,
      product: await readProductCounts(this.redis, productId),
      instances: [this.stats.snapshot()],
      sale: null,
      log: [],
    };
  }
}
