// Answers of a read kept for a short while (bounded, least recently used out); identical reads in flight share one load.
// Answers can be forgotten when what they were read from changes; a load under way then is not kept either.
import { LRUCache } from 'lru-cache';

export interface ReadThroughCacheOptions {
  /** How long an answer is served again; 0 keeps none, and only reads in flight at the same time share a load. */
  timeToLiveMs: number;
  /** Answers kept at most; the least recently used leave first. */
  maximumEntries: number;
  /**
   * Each answer is kept for a random share of the time to live, from `1 - expirySpread` of it to all of it (0, the
   * default: all of it). Answers loaded together, as after a start, are then not all loaded again in the same
   * instant, which would stall every other request while the batch is read and serialized.
   */
  expirySpread?: number;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
  /** A number in [0, 1); tests fix it. */
  random?: () => number;
  /**
   * Answers are kept, and kept ones served, only while this holds (a source of change notices is heard); when
   * absent, always.
   */
  keepWhile?: () => boolean;
}

interface Entry<Value> {
  value: Value;
  /** Epoch milliseconds from which the answer is never served (the LRU's own TTL would serve it at that instant). */
  expiresAt: number;
}

export class ReadThroughCache<Value> {
  /** Absent when nothing is kept (no time to live or no entries): reads in flight are still shared. */
  private readonly answers: LRUCache<string, Entry<Value>> | undefined;
  private readonly loading = new Map<string, Promise<Value>>();
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly keeping: () => boolean;

  constructor(private readonly options: ReadThroughCacheOptions) {
    const { timeToLiveMs, maximumEntries } = options;
    this.answers =
      timeToLiveMs > 0 && maximumEntries > 0 ? new LRUCache({ max: Math.floor(maximumEntries) }) : undefined;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.keeping = options.keepWhile ?? (() => true);
  }

  /**
   * The kept answer for `key`, else the load already under way for it, else a new `load()`. A failed load is
   * never kept: the next read loads again.
   */
  read(key: string, load: () => Promise<Value>): Promise<Value> {
    const kept = this.answers?.get(key);
    if (kept !== undefined) {
      if (kept.expiresAt > this.now() && this.keeping()) return Promise.resolve(kept.value);
      this.answers?.delete(key);
    }
    const underWay = this.loading.get(key);
    if (underWay !== undefined) return underWay;
    const loaded: Promise<Value> = load().then(
      (value) => {
        // Forgotten while it loaded: it may have read what was there before the change.
        if (this.loading.get(key) === loaded) {
          this.loading.delete(key);
          this.keep(key, value);
        }
        return value;
      },
      (error: unknown) => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, loaded);
    return loaded;
  }

  /**
   * Drops the kept answers whose key matches, and lets the loads under way for them answer their own callers only:
   * later reads load again.
   */
  forgetWhere(matches: (key: string) => boolean): void {
    // The LRU's key walk is not safe against deletes along the way; the in-flight Map's is.
    for (const key of [...(this.answers?.keys() ?? [])]) if (matches(key)) this.answers?.delete(key);
    for (const key of this.loading.keys()) if (matches(key)) this.loading.delete(key);
  }

  forgetAll(): void {
    this.answers?.clear();
    this.loading.clear();
  }

  private keep(key: string, value: Value): void {
    if (this.answers === undefined || !this.keeping()) return;
    const { timeToLiveMs, expirySpread = 0 } = this.options;
    const keptForMs = timeToLiveMs * (1 - expirySpread * this.random());
    this.answers.set(key, { value, expiresAt: this.now() + keptForMs });
  }
}
