/**
 * Preloaded (`--import`) into a server process by test/foundation/idle-modules.test.ts: on SIGUSR2
 * it prints one line, `loaded-modules <json>`, naming every module the process has loaded so far,
 * ES modules (seen through a resolve hook registered here, before the server's own imports) and
 * CommonJS ones (the require cache).
 */
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const seen = new Set<string>();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url: string) => seen.add(url));
port1.unref();
register(
  `data:text/javascript,${encodeURIComponent(`
    let port;
    export function initialize(data) { port = data.port; }
    export async function resolve(specifier, context, next) {
      const r = await next(specifier, context);
      port.postMessage(r.url);
      return r;
    }
  `)}`,
  { data: { port: port2 }, transferList: [port2] },
);

process.on('SIGUSR2', () => {
  // The resolve hook runs on its own thread: give its last messages a moment to arrive.
  setTimeout(() => {
    const cjs = Object.keys(createRequire(import.meta.url).cache);
    process.stdout.write(`loaded-modules ${JSON.stringify([...seen, ...cjs])}\n`);
  }, 200);
});
