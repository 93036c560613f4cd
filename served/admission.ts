// Admission of work that a request starts and that outlives a quick answer (exports, on-demand
// series): a global limit and a per-tenant limit on how many run at once. Beyond either, the
// request is refused at once (the caller answers 429 or 503 with Retry-After) rather than queued
// without bound.

export type Refusal = { scope: 'tenant' | 'global'; limit: number };

export class Admission {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  constructor(
    readonly globalLimit: number,
    readonly perKeyLimit: number,
  ) {}

  /** Take a place for `key` (a customer, or "operator"); `release` gives it back, once. */
  admit(key: string): { ok: true; release: () => void } | { ok: false; refusal: Refusal } {
    const mine = this.byKey.get(key) ?? 0;
    if (mine >= this.perKeyLimit) return { ok: false, refusal: { scope: 'tenant', limit: this.perKeyLimit } };
    if (this.total >= this.globalLimit) return { ok: false, refusal: { scope: 'global', limit: this.globalLimit } };
    this.total++;
    this.byKey.set(key, mine + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const n = (this.byKey.get(key) ?? 1) - 1;
        if (n === 0) this.byKey.delete(key);
        else this.byKey.set(key, n);
      },
    };
  }

  get running(): number {
    return this.total;
  }
}
