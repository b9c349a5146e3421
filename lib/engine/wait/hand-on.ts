/**
 * How the lock of one queue moves inside this process between visits to the store: the local
 * hand-offs in a row (`passes`), whether the lock held here was set for its holder by a release
 * here (`inherited`), and whether other processes waited at the last release (`contested`).
 * The terms are defined in docs/ARCHITECTURE.md's glossary.
 */
export class HandOn {
  passes = 0;
  inherited = false;
  contested = false;

  constructor(
    /** `localHandoffs`: the most passes in a row per lock held here. */
    private readonly perHolder: number,
    /** How many locks of the queue this process may hold at once. */
    private readonly capacity: number,
  ) {}

  /** The lock held here came from another holder here: the key is hot in this process. */
  get handingOn(): boolean {
    return this.passes > 0 || this.inherited;
  }

  /**
   * Whether a lock released here may pass to a waiter here without the store: up to
   * `localHandoffs` passes per lock held here (each holder of a semaphore hands on as a mutex
   * does), so that every few releases go through the store, where other processes wait.
   */
  mayPass(holders: number): boolean {
    return this.passes < this.perHolder * Math.max(1, Math.min(holders, this.capacity));
  }

  /** A lock came from the store, or (`inherited`) from a release here that set it. */
  restart(inherited = false): void {
    this.passes = 0;
    this.inherited = inherited;
  }
}
