/** Prints a harness timing when HARNESS_TIMINGS is set; quiet otherwise. */
export function reportTiming(what: string, ms: number): void {
  if (process.env.HARNESS_TIMINGS) console.log(`${what}: ${Math.round(ms)} ms`);
}
