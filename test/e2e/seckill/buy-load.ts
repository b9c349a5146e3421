import { outcomeOf, type Answer } from './seckill-http.js';

/** One buyer's final answer, from whichever instance gave it. */
export interface BuyAnswer {
  readonly userId: string;
  readonly url: string;
  /** `201`, or the status and the refusal's code, e.g. `409 SOLD_OUT`. */
  readonly outcome: string;
}

export interface BuyLoadSettings {
  readonly productId: number;
  readonly users: readonly string[];
  /** Requests in flight at once, over all instances. */
  readonly concurrency: number;
  readonly urls: readonly string[];
  readonly onAnswer?: (answer: BuyAnswer) => void;
}

// A request to a dead instance fails at once; this only bounds a hang on a live one.
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * Buys once per user with bounded concurrency, round-robin over the instances still up. When an
 * instance is taken down (`down`), the requests it never answered are sent again, same user, to
 * the others: as a load balancer would after a failed health check.
 */
export class BuyLoad {
  readonly answers: BuyAnswer[] = [];
  /** Users whose request a downed instance never answered (then sent elsewhere). */
  readonly rerouted: string[] = [];
  private readonly up: string[];
  private nextUser = 0;
  private turn = 0;

  constructor(private readonly settings: BuyLoadSettings) {
    this.up = [...settings.urls];
  }

  /** Stops sending to `url`; call it before killing the instance. */
  down(url: string): void {
    this.up.splice(this.up.indexOf(url), 1);
  }

  /** Resolves once every user has an answer; rejects if a live instance fails to answer. */
  async run(): Promise<void> {
    const workers = Array.from({ length: this.settings.concurrency }, () => this.work());
    await Promise.all(workers);
  }

  /** Answers counted by outcome, e.g. `{ '201': 50, '409 SOLD_OUT': 950 }`. */
  tally(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { outcome } of this.answers) counts[outcome] = (counts[outcome] ?? 0) + 1;
    return counts;
  }

  private async work(): Promise<void> {
    for (;;) {
      const userId = this.settings.users[this.nextUser++];
      if (userId === undefined) return;
      const answer = await this.buy(userId);
      this.answers.push(answer);
      this.settings.onAnswer?.(answer);
    }
  }

  private async buy(userId: string): Promise<BuyAnswer> {
    for (;;) {
      const url = this.pick();
      try {
        return { userId, url, outcome: outcomeOf(await this.post(url, userId)) };
      } catch (error) {
        if (this.up.includes(url)) throw error;
        this.rerouted.push(userId);
      }
    }
  }

  private async post(url: string, userId: string): Promise<Answer> {
    const response = await fetch(`${url}/products/${this.settings.productId}/buy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    // Read in the try of `buy`: a body cut short by the instance's death counts as no answer.
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  }

  private pick(): string {
    if (this.up.length === 0) throw new Error('no instance left to send the load to');
    return this.up[this.turn++ % this.up.length];
  }
}
