/**
 * A Map that holds at most `max` entries: adding one more forgets the oldest (in insertion order).
 * For the process's caches and counters, so that nothing a client sends can grow them without
 * bound. Deleting and setting a key again makes it the newest, which gives least-recently-used
 * order where a caller wants it.
 *
 * The oldest entry is found with one iterator kept from one eviction to the next. A Map keeps a
 * deleted entry's slot until it rehashes, and a fresh `keys().next()` walks every such slot from
 * the start: a full map evicting on each insert (the issuance rate counters, a new client address
 * per update check) walked thousands of them each time, tens of µs a request (docs/performance.md,
 * 'The update check at 20,000 licenses'). A kept iterator only moves forward: every slot behind it
 * is an entry already evicted, deleted, or moved to the end by being set again, and entries added
 * later come after it, as the language defines a Map iterator's walk.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  private oldest: Iterator<K> | null = null;

  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.nextOldest());
    return super.set(key, value);
  }

  private nextOldest(): K {
    let next = this.oldest?.next();
    // A finished iterator stays finished (the map was emptied, or walked to its end): a new one.
    if (!next || next.done) {
      this.oldest = this.keys();
      next = this.oldest.next();
    }
    return next.value as K;
  }
}
