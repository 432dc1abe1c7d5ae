/**
 * The Node.js release lines Tollgate runs on, each from its lowest usable release; CI runs the
 * suite on each line (docs/development.md, "Node.js versions"). Any other version is refused at
 * start with a message, rather than failing later in a native module or a dependency.
 *
 * src/main.ts checks this before it loads anything else, so this module must itself load on any
 * Node.js: no imports, nothing newer than ES2022.
 */
export const SUPPORTED_NODE: readonly { major: number; minor: number }[] = [
  // 20.19 loads ES modules with require(): Fastify's CommonJS code requires cookie 2 and
  // content-disposition 3, which are ES modules only.
  { major: 20, minor: 19 },
  // 22.14 has Node-API 10, which better-sqlite3 13 is built for (older 22s crash loading it).
  { major: 22, minor: 14 },
  { major: 24, minor: 0 },
];

/** Null when Node.js `version` (as in `process.versions.node`, e.g. "24.21.0") is supported; else why not. */
export function unsupportedNode(version: string): string | null {
  const match = /^(\d+)\.(\d+)\.\d+/.exec(version);
  const line = match ? SUPPORTED_NODE.find((l) => l.major === Number(match[1])) : undefined;
  if (match && line && Number(match[2]) >= line.minor) return null;
  const supported = SUPPORTED_NODE.map((l) =>
    l.minor ? `${l.major} (${l.major}.${l.minor} or later)` : `${l.major}`,
  );
  return `Node.js ${version} is not supported: run Tollgate on Node.js ${supported.slice(0, -1).join(', ')} or ${supported.at(-1)}`;
}
