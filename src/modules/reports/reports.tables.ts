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
}
