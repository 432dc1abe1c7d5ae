import limits from 'virtual:limits';

/**
 * The server's limits on an input, as its attributes: `maxLength` for text, `min` and `max` for a
 * number, taken from the API route's schema when the console is built (scripts/console-limits.ts),
 * so the browser stops what the server would refuse.
 */
export function inputLimits(
  form: keyof typeof limits,
  field: string,
): { maxLength?: number; min?: number; max?: number } {
  const l = limits[form][field];
  if (!l) return {};
  return {
    ...(l.maxLength !== undefined ? { maxLength: l.maxLength } : {}),
    ...(l.minimum !== undefined ? { min: l.minimum } : {}),
    ...(l.maximum !== undefined ? { max: l.maximum } : {}),
  };
}
