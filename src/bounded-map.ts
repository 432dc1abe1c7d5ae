/**
 * A Map that holds at most `max` entries: adding one more forgets the oldest (in insertion order).
 * For the process's caches and counters, so that nothing a client sends can grow them without
 * bound. Deleting and setting a key again makes it the newest, which gives least-recently-used
 * order where a caller wants it.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
