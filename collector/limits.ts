// Admission of ingest requests (design.md, principle 9): a token bucket of reports per ingest key
// (429 with Retry-After beyond it), and the spool's size (503 with Retry-After when the collector
// holds more than it may before landing it). Per process: each collector admits what it can keep.
import type { Spool } from './spool.ts';

export class KeyRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly capacity: number;

  /** `perSecond` reports per key and second (0: no limit), bursts up to two seconds' worth. */
  constructor(private readonly perSecond: number, minBurst: number) {
    this.capacity = Math.max(perSecond * 2, minBurst);
  }

  private bucket(key: string, now: number): { tokens: number; at: number } {
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.capacity, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.capacity, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    return b;
  }

  /** Seconds to wait before this key may send again; 0 when it may now. */
  retryAfter(key: string, now = Date.now()): number {
    if (this.perSecond <= 0) return 0;
    const b = this.bucket(key, now);
    return b.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /** Charge `reports` to a key (a request already admitted may take the bucket below zero). */
  consume(key: string, reports: number, now = Date.now()): void {
    if (this.perSecond <= 0) return;
    const b = this.bucket(key, now);
    b.tokens = Math.max(-this.capacity, b.tokens - reports);
  }
}

/** Seconds after which a client refused for a full spool should try again. */
export const SPOOL_FULL_RETRY_SECONDS = 5;

/** Whether the spool may take more: under its size cap. */
export function spoolHasRoom(spool: Spool, maxBytes: number): boolean {
  return spool.bytes() < maxBytes;
}
