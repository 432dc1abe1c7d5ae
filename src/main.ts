#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=524288 node --max-semi-space-size=4 --expose-gc
import { unsupportedNode } from './node-version.js';

// The Node.js version is checked before the service and its native modules are loaded (a static
// import would load them first): on an unsupported Node.js they would crash, or load and fail later.
const unsupported = unsupportedNode(process.versions.node);
if (unsupported) {
  console.error(`tollgate: ${unsupported}`);
  process.exit(1);
}
await import('./cli.js');
