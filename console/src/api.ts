/**
 * The console's one way to the server: the public /v1 API with the session cookie, and the
 * session's nonce in X-REST-Nonce on every request that changes something (docs/api.md), typed
 * by the OpenAPI document (docs/development.md, 'The console's API client').
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../sdk/js/src/openapi';

/** An answer in the API's error envelope `{code, message, data: {status, ...}}`, or a failed connection. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The fields the server named as wrong, e.g. `{slug: 'must match pattern'}`. */
  get params(): Record<string, string> {
    const params = this.data.params;
    return params && typeof params === 'object' ? (params as Record<string, string>) : {};
  }
}

let nonce = '';
let sessionLost: () => void = () => {};

export const setNonce = (value: string) => {
  nonce = value;
};

/** Called when the server no longer knows the session (expired, or ended elsewhere). */
export const onSessionLost = (handler: () => void) => {
  sessionLost = handler;
};

const json = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/** Turns a non-2xx answer (its text, or its parsed JSON) into an ApiError with the server's code and words. */
export function errorFrom(status: number, answer: unknown): ApiError {
  const body = (typeof answer === 'string' ? json(answer) : answer) as {
    code?: unknown;
    error?: unknown;
    message?: unknown;
    data?: unknown;
  } | null;
  const code = typeof body?.code === 'string' ? body.code : typeof body?.error === 'string' ? body.error : '';
  const message =
    typeof body?.message === 'string' && body.message
      ? body.message
      : `The server answered with HTTP status ${status}.`;
  const data = body?.data && typeof body.data === 'object' ? (body.data as Record<string, unknown>) : {};
  return new ApiError(status, code || `http_${status}`, message, data);
}

export const networkError = () =>
  new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');

/** The API's routes as its OpenAPI document types them (sdk/js/src/openapi.d.ts, shared with the SDK). */
export type { paths };

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
/** What a route answers on success (200 or 201), e.g. `Answer<'/v1/products/{id}'>`. */
export type Answer<P extends keyof paths, M extends Method = 'get'> = paths[P][M] extends {
  responses: infer R;
}
  ? { [S in keyof R]: S extends 200 | 201 ? Json<R[S]> : never }[keyof R]
  : never;
/** A route's JSON body, e.g. `Body<'/v1/products', 'post'>`. */
export type Body<P extends keyof paths, M extends Method> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/**
 * The typed client: `api.GET('/v1/products/{id}', {params: {path: {id}}})`, its path, parameters,
 * body and answer checked against the route schemas. Wrap a call in `ok` (or `page`) for its data.
 */
export const api = createClient<paths>({
  headers: { accept: 'application/json' },
  credentials: 'same-origin',
});
api.use({
  onRequest: ({ request }) => {
    if (request.method !== 'GET' && nonce) request.headers.set('x-rest-nonce', nonce);
    return request;
  },
  onError: () => networkError(),
});

interface Called<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** The data of a successful call; otherwise an ApiError carrying the server's own code and words. */
export async function ok<D>(call: Promise<Called<D>>): Promise<D> {
  const { data, error, response } = await call;
  // 2xx answers carry what the route's schema says (an empty body is undefined).
  if (response.ok) return data as D;
  const failure = errorFrom(response.status, error);
  // A refused sign-in is the sign-in form's to show; elsewhere the session has ended.
  const signingIn = new URL(response.url, location.href).pathname.startsWith('/v1/auth/');
  if (failure.code === 'rest_not_logged_in' && !signingIn) sessionLost();
  throw failure;
}

/** One page of a list the server paginates, with its total from `X-WP-Total` (docs/api.md). */
export async function page<T>(call: Promise<Called<T[]>>): Promise<{ rows: T[]; total: number }> {
  const rows = await ok(call);
  const { response } = await call;
  return { rows, total: Number(response.headers.get('x-wp-total') ?? rows.length) };
}

/** A query string from the values that are set (empty strings and undefined are left out). */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * A multipart upload with progress (fetch reports none for request bodies). The fields are sent in
 * the order given, the file last: the server must know the storage driver before the bytes arrive.
 */
export function upload<P extends keyof paths>(
  path: P,
  at: Record<string, string | number>,
  fields: [string, string][],
  file: File,
  onProgress: (sent: number, total: number) => void,
): { done: Promise<Answer<P, 'post'>>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(at[name])));
  const done = new Promise<Answer<P, 'post'>>((resolve, reject) => {
    const form = new FormData();
    for (const [k, v] of fields) form.append(k, v);
    form.append('file', file, file.name);
    xhr.open('POST', url);
    xhr.setRequestHeader('accept', 'application/json');
    if (nonce) xhr.setRequestHeader('x-rest-nonce', nonce);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(json(xhr.responseText) as Answer<P, 'post'>);
      else {
        const error = errorFrom(xhr.status, xhr.responseText);
        if (error.code === 'rest_not_logged_in') sessionLost();
        reject(error);
      }
    };
    xhr.onerror = () => reject(networkError());
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'The upload was cancelled; nothing was stored.'));
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}
