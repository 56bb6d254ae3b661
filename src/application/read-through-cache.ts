// Answers of a read kept for a short while (bounded, least recently used out); identical reads in flight share one load.

export interface ReadThroughCacheOptions {
  /** How long an answer is served again; 0 keeps none, and only reads in flight at the same time share a load. */
  timeToLiveMs: number;
  /** Answers kept at most; the least recently used leave first. */
  maximumEntries: number;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
}

interface Entry<Value> {
  value: Value;
  expiresAt: number;
}

export class ReadThroughCache<Value> {
  // A Map iterates in insertion order: re-inserting on a hit makes its first key the least recently used.
  private readonly answers = new Map<string, Entry<Value>>();
  private readonly loading = new Map<string, Promise<Value>>();
  private readonly now: () => number;

  constructor(private readonly options: ReadThroughCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The kept answer for `key`, else the load already under way for it, else a new `load()`. A failed load is
   * never kept: the next read loads again.
   */
  read(key: string, load: () => Promise<Value>): Promise<Value> {
    const kept = this.answers.get(key);
    if (kept !== undefined) {
      this.answers.delete(key);
      if (kept.expiresAt > this.now()) {
        this.answers.set(key, kept);
        return Promise.resolve(kept.value);
      }
    }
    const underWay = this.loading.get(key);
    if (underWay !== undefined) return underWay;
    const loaded = load().then(
      (value) => {
        this.loading.delete(key);
        this.keep(key, value);
        return value;
      },
      (error: unknown) => {
        this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, loaded);
    return loaded;
  }

  private keep(key: string, value: Value): void {
    if (this.options.timeToLiveMs <= 0 || this.options.maximumEntries <= 0) return;
    this.answers.set(key, { value, expiresAt: this.now() + this.options.timeToLiveMs });
    while (this.answers.size > this.options.maximumEntries) {
      const oldest = this.answers.keys().next();
      if (oldest.done === true) break;
      this.answers.delete(oldest.value);
    }
  }
}
