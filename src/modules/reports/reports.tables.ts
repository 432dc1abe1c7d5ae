/** Update checks and downloads per UTC day and product, added to by each process's flush (counters.ts). */
export interface ReportsTables {
  daily_counters: {
    /** `update_check` or `download`. */
    kind: string;
    /** `YYYY-MM-DD`, UTC. */
    day: string;
    product_id: number;
    count: number;
  };
  /** Keyed hashes of the sites counted today and yesterday (installed-base.ts); no site can be told from one. */
  field_sites: {
    /** `YYYY-MM-DD`, UTC. */
    day: string;
    product_id: number;
    /** HMAC-SHA-256 of the day, product and site identity under a server secret, 32 hex characters. */
    site: string;
  };
  /** Sites per product, UTC day and version: of the product, of the platform, of PHP (installed-base.ts). */
  field_counts: {
    product_id: number;
    day: string;
    /** `version`, `platform` or `php`. */
    kind: string;
    /** The platform (`wordpress`) for `platform`; empty otherwise. */
    name: string;
    version: string;
    sites: number;
  };
}
