import Fastify from 'fastify';

/**
 * The baseline: a bare Fastify JSON route answering a body of the given size, so a benchmark can
 * state our route's throughput as a ratio against the framework alone on the same machine, same run.
 */
const size = Number(process.env.BODY_SIZE ?? 600);
const body = { valid: true, padding: 'x'.repeat(Math.max(0, size - 30)) };
const app = Fastify({ logger: false });
app.post('/bare', async () => body);
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const addr = app.server.address();
console.log(`listening on http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
