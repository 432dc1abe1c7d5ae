import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toApiError } from '../../http/error-handler.js';
import { ApiError } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { OpenedArtifact } from '../releases/releases.module.js';
import { platformCodes } from '../reports/installed-base.schemas.js';
import type { DailyCounters, InstalledBase, SiteFacts } from '../reports/reports.module.js';
import * as S from './distribution.schemas.js';
import type { CheckInput, DistributionService } from './distribution.service.js';
import type { DownloadService } from './download.service.js';

const tags = ['distribution'];

/** Headers of every download answer, success or refusal: never cached, never ranged. */
const NO_CACHE = {
  'cache-control': 'no-cache, must-revalidate',
  pragma: 'no-cache',
  expires: '0',
};

/**
 * Software distribution (docs/distribution.md). Bodies and token URLs are never logged (redact.ts).
 */
export async function distributionRoutes(
  app: App,
  opts: {
    distribution: DistributionService;
    downloads: DownloadService;
    counters: DailyCounters;
    installedBase: InstalledBase;
  },
) {
  const { distribution, downloads, counters, installedBase } = opts;
  // Every refusal of the package route and the update check, the schema's and the body parser's
  // included, carries what the customer can be shown (docs/distribution.md, 'Messages a vendor can
  // show'); the store's error handler then answers it as any other.
  const explained = (route: 'check' | 'package') => async (error: FastifyError, request: FastifyRequest) => {
    const input = request.method === 'GET' ? request.query : request.body;
    throw await distribution.explain(
      toApiError(error, request.routeOptions.config.validationCodes) ?? error,
      input,
      route,
    );
  };

  app.post(
    '/software/package',
    {
      errorHandler: explained('package'),
      schema: {
        tags,
        summary: 'Server-selected package issuance: a single-use download URL, or an external link',
        body: S.PackageBody,
        response: { 200: S.PackageResponse, ...errors(400, 403, 404, 409, 429, 500, 501, 503) },
      },
    },
    (request) => distribution.package(request.body as S.PackageBodyType, request.ip),
  );

  // What the site runs is noted in memory for the installed-base report: no statement either.
  // One function for every check, and one await: no closure and no promise chain per request.
  const seen = (productId: number, site: string, input: SiteFacts) =>
    installedBase.record(productId, site, input);
  const check = async (input: CheckInput, ip: string) => {
    const answer = await distribution.check(input, ip, seen);
    // An answered update check is counted in memory for the dashboard: no statement is added
    // (docs/admin.md, 'Dashboard').
    counters.add('update_check', answer.product.id);
    return answer;
  };

  app.get(
    '/software/check',
    {
      errorHandler: explained('check'),
      config: { validationCodes: { invalid: platformCodes } },
      schema: {
        tags,
        summary: 'Update check (a download URL only when eligible for a local package)',
        querystring: S.CheckInput,
        response: { 200: S.CheckResponse, ...errors(400, 403, 404, 409, 429, 500, 503) },
      },
    },
    (request) => check(request.query, request.ip),
  );

  app.post(
    '/software/check',
    {
      errorHandler: explained('check'),
      config: { validationCodes: { invalid: platformCodes } },
      schema: {
        tags,
        summary: 'Update check (POST form of GET /software/check)',
        body: S.CheckInput,
        response: { 200: S.CheckResponse, ...errors(400, 403, 404, 409, 429, 500, 503) },
      },
    },
    (request) => check(request.body, request.ip),
  );

  app.get(
    '/software/changelog',
    {
      schema: {
        tags,
        summary: 'Public changelog of published releases (never rate limited)',
        querystring: S.ChangelogQuery,
        response: { 200: S.ChangelogResponse, ...errors(400, 404, 409) },
      },
    },
    (request) => distribution.changelog(request.query),
  );

  app.get(
    '/software/products/:product_id/versions/:version_id/external-link',
    {
      schema: {
        tags,
        summary: 'Gated manual download link of an external release',
        params: S.ExternalLinkParams,
        querystring: S.ExternalLinkQuery,
        response: { 200: S.ExternalLinkResponse, ...errors(400, 401, 403, 404, 409, 410, 429, 500, 503) },
      },
    },
    (request) =>
      distribution.externalLink(request.params.product_id, request.params.version_id, request.query, {
        ip: request.ip,
        user: request.user,
      }),
  );

  // HEAD never reaches the GET handler (it would otherwise run it): refused without touching the token.
  app.head('/software/download', { schema: { hide: true } }, async (_request, reply) => {
    const e = new ApiError('head_not_supported');
    reply.status(405).headers({ allow: 'GET', 'accept-ranges': 'none', ...NO_CACHE });
    return reply.send(e.toBody());
  });

  app.get(
    '/software/download',
    {
      exposeHeadRoute: false,
      schema: {
        tags,
        summary: 'Redeem a single-use token and stream the package (HEAD and Range are refused)',
        querystring: {
          type: 'object',
          properties: { token: { description: 'the single-use token (64 characters)' } },
        },
        response: errors(400, 403, 404, 405, 409, 410, 416, 500, 503),
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      reply.headers({ 'accept-ranges': 'none', ...NO_CACHE });
      const query = (request.query ?? {}) as Record<string, unknown>;
      if (Object.keys(query).some((k) => k !== 'token') || Array.isArray(query.token)) {
        throw new ApiError('download_override_rejected');
      }
      if (request.headers.range !== undefined) throw new ApiError('range_not_supported');
      const token = typeof query.token === 'string' ? query.token : '';
      if (token === '') throw new ApiError('missing_token');
      const { file, productId } = await downloads.redeem(token);
      reply.headers({
        'content-type': 'application/zip',
        'content-disposition': `attachment; filename="${file.fileName}"`,
        'content-length': String(file.size),
        'x-package-sha256': file.sha256,
      });
      // Stored at upload, never computed here (docs/distribution.md, '4. GET /software/download'):
      // WordPress's download_url() checks Content-MD5 by itself, and X-Content-Signature for the
      // hosts a site lists in wp_signature_hosts.
      if (file.md5 !== null) reply.header('content-md5', file.md5);
      if (file.signature !== null) reply.header('x-content-signature', file.signature);
      // Only a download whose last byte was written counts (the dashboard's downloads per day).
      if (await sendPackage(reply, file)) counters.add('download', productId);
    },
  );
}

/**
 * Writes the package to the socket with at most two chunks in flight: the next chunk is asked for
 * only once the one before the last is written, because the driver reads into the same buffers
 * again. A download so holds a few MiB however slow the client (fresh buffers per chunk were
 * garbage that V8 reclaimed late: tens of MB of RSS under parallel downloads), and the socket
 * always has the next chunk queued. Fastify's stream sending pipes, which cannot tell when a chunk
 * has been written, so the claimed download takes the reply over with its headers final.
 */
async function sendPackage(reply: FastifyReply, file: OpenedArtifact): Promise<boolean> {
  // The first chunk before the headers: a file that cannot be read at all still gets an error
  // answer from the error handler (the token stays used: the claim has committed).
  const first = await file.chunks.next();
  reply.hijack();
  const res = reply.raw;
  if (res.destroyed) {
    await file.chunks.return();
    return false;
  }
  const closed = new Promise<Error>((resolve) =>
    res.once('close', () => resolve(new Error('connection closed before the end'))),
  );
  const settled = async (write: Promise<Error | null | undefined> | null) => {
    const error = write && (await Promise.race([write, closed]));
    if (error) throw error;
  };
  res.writeHead(200, reply.getHeaders() as OutgoingHttpHeaders);
  try {
    let previous: Promise<Error | null | undefined> | null = null;
    const write = async (chunk: Buffer) => {
      const written = new Promise<Error | null | undefined>((resolve) => res.write(chunk, resolve));
      await settled(previous);
      previous = written;
    };
    if (!first.done) {
      await write(first.value);
      for await (const chunk of file.chunks) await write(chunk);
    }
    await settled(previous);
    res.end();
    return true;
  } catch (e) {
    // The token is spent and the headers are out: a cut connection is the only signal left (the
    // client sees a short body against Content-Length and X-Package-SHA256).
    reply.log.info({ reason: (e as Error).message }, 'download stopped before the end');
    res.destroy();
    return false;
  } finally {
    // Releases the file when the loop did not run to its end (a no-op when it did).
    await file.chunks.return();
  }
}
