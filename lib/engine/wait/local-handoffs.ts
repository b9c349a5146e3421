/**
 * How the lock of one queue moves inside this process between visits to the store: the local
 * hand-offs in a row (`count`), whether the lock held here is a successor lease a release here
 * set (`successorLease`), and whether other processes waited at the last release
 * (`othersWaiting`). The terms are defined in docs/ARCHITECTURE.md's glossary.
 */
export class LocalHandoffs {
  count = 0;
  successorLease = false;
  othersWaiting = false;

  constructor(
    /** `localHandoffs`: the most hand-offs in a row per lock held here. */
    private readonly perHolder: number,
    /** How many locks of the queue this process may hold at once. */
    private readonly capacity: number,
  ) {}

  /** The lock held here was handed off by another holder here: the key is hot in this process. */
  get handedOff(): boolean {
    return this.count > 0 || this.successorLease;
  }

  /**
   * Whether a lock released here may be handed off to a waiter here without the store: up to
   * `localHandoffs` hand-offs per lock held here (each holder of a semaphore hands off as a mutex
   * does), so that every few releases go through the store, where other processes wait.
   */
  mayHandOff(holders: number): boolean {
    return this.count < this.perHolder * Math.max(1, Math.min(holders, this.capacity));
  }

  /** A lock came from the store, or (`successorLease`) from a release here that set it. */
  restart(successorLease = false): void {
    this.count = 0;
    this.successorLease = successorLease;
  }
}
