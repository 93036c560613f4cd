// Admission of ingest requests (docs/architecture.md, principle 9): token buckets per ingest key of reports,
// of bytes inflated and of checking time, and per client address of refused keys (429 with
// Retry-After beyond them), and the spool's size (503 with Retry-After when the collector holds
// more than it may before landing it). Per process: each collector admits what it can keep.
import type { Spool } from './spool.ts';

/**
 * Token buckets by key: each refills at `perSecond` up to `capacity`. Work is charged after it is
 * done (a request already admitted may take its bucket below zero, down to -capacity), and a key
 * waits while its bucket holds less than one token. `perSecond` 0: no limit. Idle full buckets are
 * dropped once there are many (client addresses come and go).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly capacity: number,
    private readonly maxKeys = 100_000,
  ) {}

  private bucket(key: string, now: number): { tokens: number; at: number } {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.dropFull(now);
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

  /** Charge `amount` to a key. */
  consume(key: string, amount: number, now = Date.now()): void {
    if (this.perSecond <= 0) return;
    const b = this.bucket(key, now);
    b.tokens = Math.max(-this.capacity, b.tokens - amount);
  }

  private dropFull(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.capacity) this.buckets.delete(key);
    }
  }
}

/** Reports per key and second, bursts up to two seconds' worth (at least one full batch). */
export function reportLimiter(perSecond: number, maxReports: number): TokenBuckets {
  return new TokenBuckets(perSecond, Math.max(perSecond * 2, maxReports));
}

/**
 * The work a key's batches cost the collector, per second: bytes inflated and time spent checking
 * (bursts of two seconds' worth, at least one batch at its limits). A key over either waits.
 */
export class WorkBudgets {
  private readonly bytes: TokenBuckets;
  private readonly ms: TokenBuckets;

  constructor(limits: { inflatedBytesPerKey: number; checkMsPerKey: number; maxInflatedBytes: number; maxCheckMs: number }) {
    this.bytes = new TokenBuckets(limits.inflatedBytesPerKey, Math.max(limits.inflatedBytesPerKey * 2, limits.maxInflatedBytes));
    this.ms = new TokenBuckets(limits.checkMsPerKey, Math.max(limits.checkMsPerKey * 2, limits.maxCheckMs));
  }

  retryAfter(key: string, now = Date.now()): number {
    return Math.max(this.bytes.retryAfter(key, now), this.ms.retryAfter(key, now));
  }

  charge(key: string, work: { inflatedBytes: number; ms: number }, now = Date.now()): void {
    this.bytes.consume(key, work.inflatedBytes, now);
    this.ms.consume(key, work.ms, now);
  }
}

/** Refused keys per client address and second, bursts of ten seconds' worth. */
export function keyFailureLimiter(perSecond: number): TokenBuckets {
  return new TokenBuckets(perSecond, perSecond * 10);
}

/** Seconds after which a client refused for a full spool should try again. */
export const SPOOL_FULL_RETRY_SECONDS = 5;
/** ...and one refused because the spool cannot write (it tries again every second or so). */
export const SPOOL_RETRY_SECONDS = 5;

/** Whether the spool may take more: under its size cap. */
export function spoolHasRoom(spool: Spool, maxBytes: number): boolean {
  return spool.bytes() < maxBytes;
}
