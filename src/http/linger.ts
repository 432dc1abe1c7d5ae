import type { FastifyReply, FastifyRequest } from 'fastify';

/** How much of an unread body is read and dropped after an early answer, and for how long at most. */
export const LINGER_BYTES = 8 * 1024 * 1024;
export const LINGER_MS = 5_000;

/**
 * Lingering close, as nginx does it. A request refused before its body was read (an anonymous
 * upload, a body over the size limit) is answered at once. Closing the connection then, with the
 * client still sending, resets it: the client sees EPIPE or ECONNRESET instead of the answer
 * (Node's fetch did for most refused uploads). So the rest of the body is read and dropped, up to
 * LINGER_BYTES or for LINGER_MS from the answer, whichever comes first, and only then is the
 * connection closed; a body that ends in time leaves the connection reusable.
 *
 * The answer must then not say `Connection: close`, which Fastify adds to every answer to a body
 * it could not parse (one over BODY_LIMIT among them): Node destroys a connection as soon as such
 * an answer is written, the body still arriving meets a reset, and Node's fetch, still writing it
 * on a kept-alive connection, failed with EPIPE instead of reading its 413. So the reply's
 * `connection` header is removed here; the body read and dropped, the connection carries the
 * next request, and a body past the bounds is cut off as before.
 */
export function lingerIfUnread(request: FastifyRequest, reply: FastifyReply): void {
  const req = request.raw;
  const socket = req.socket;
  if (req.complete || req.readableEnded || req.destroyed || !socket || socket.destroyed) return;
  reply.removeHeader('connection');
  // Read it here, before the answer is sent: once an answer finishes, Node drops the rest of an
  // unread body inside its parser, unbounded and uncounted. A consumer that stopped half way (a
  // failed multipart parser) is detached first.
  let left = LINGER_BYTES;
  const stop = () => socket.destroy();
  const timer = setTimeout(stop, LINGER_MS);
  const count = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) stop();
  };
  // Every listener goes with the body: a kept-alive connection carries many requests, and a
  // 'close' listener left behind by each would pile up on its socket.
  const done = () => {
    clearTimeout(timer);
    req.off('data', count);
    req.off('end', done);
    socket.off('close', done);
  };
  req.unpipe();
  req.on('data', count);
  req.once('end', done);
  socket.once('close', done);
  req.resume();
}
