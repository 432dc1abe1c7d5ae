/** Whether a database error is a unique-constraint violation, in PostgreSQL's or SQLite's words. */
export const isUniqueViolation = (e: unknown): boolean => {
  const code = (e as { code?: unknown })?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
};
