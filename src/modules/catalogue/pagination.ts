import type { FastifyReply } from 'fastify';

/** WordPress-style totals for paginated lists, so clients know when to stop. */
export function paginate<T>(reply: FastifyReply, page: { items: T[]; total: number }, perPage: number): T[] {
  reply.header('X-WP-Total', String(page.total));
  reply.header('X-WP-TotalPages', String(Math.ceil(page.total / perPage)));
  return page.items;
}
