/**
 * How hard the chaos suite pushes. The default, `short`, keeps `npm run test:chaos` inside CI's
 * few minutes; `CHAOS_PROFILE=long` repeats each fault more often and runs load longer, for a
 * nightly run or a hunt for a rare failure.
 */
export type ChaosProfileName = 'short' | 'long';

export interface ChaosProfile {
  readonly name: ChaosProfileName;
  /** How many times a scenario injects its fault (each round on a fresh key). */
  readonly rounds: number;
  /** How long a load test runs between two faults, in ms. */
  readonly phaseMs: number;
}

const PROFILES: Record<ChaosProfileName, ChaosProfile> = {
  short: { name: 'short', rounds: 1, phaseMs: 1_000 },
  long: { name: 'long', rounds: 5, phaseMs: 5_000 },
};

/** The profile `CHAOS_PROFILE` names; a typo fails loudly rather than run the short one. */
export function chaosProfile(name = process.env.CHAOS_PROFILE ?? 'short'): ChaosProfile {
  const profile = PROFILES[name as ChaosProfileName];
  if (!profile) {
    throw new Error(
      `CHAOS_PROFILE must be one of ${Object.keys(PROFILES).join(', ')}, got "${name}"`,
    );
  }
  return profile;
}

export const CHAOS = chaosProfile();

/** A jest timeout for a test whose every round takes up to `perRoundMs`. */
export function timeoutFor(perRoundMs: number, fixedMs = 10_000): number {
  return fixedMs + CHAOS.rounds * perRoundMs;
}
