// Refused sign-ins per client address: past a number within a minute, the form answers 429 until
// the minute ends, so that the form is no faster a way to guess tokens than the API itself.
const WINDOW_MS = 60_000;
/** Addresses tracked at once: past it the oldest goes (a flood of addresses costs bounded memory). */
const MAX_ADDRESSES = 10_000;

export class SignInThrottle {
  private readonly failures = new Map<string, { windowStart: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Seconds until the address may try again, or 0 when it may now. */
  retryAfterSeconds(address: string, nowMs = Date.now()): number {
    const f = this.failures.get(address);
    if (!f || nowMs - f.windowStart >= WINDOW_MS || f.count < this.perMinute) return 0;
    return Math.max(1, Math.ceil((f.windowStart + WINDOW_MS - nowMs) / 1000));
  }

  refused(address: string, nowMs = Date.now()): void {
    const f = this.failures.get(address);
    if (f && nowMs - f.windowStart < WINDOW_MS) {
      f.count++;
      return;
    }
    if (this.failures.size >= MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(address, { windowStart: nowMs, count: 1 });
  }
}
