/**
 * The console's one way to the server: the public /v1 API with the session cookie, and the
 * session's nonce in X-REST-Nonce on every request that changes something (docs/api.md).
 */

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

/** Turns a non-2xx answer into an ApiError carrying the server's own code and words. */
export function errorFrom(status: number, text: string): ApiError {
  const body = json(text) as { code?: unknown; error?: unknown; message?: unknown; data?: unknown } | null;
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

export interface Answer<T> {
  body: T;
  headers: Headers;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && nonce) headers['x-rest-nonce'] = nonce;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`/v1${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw networkError();
  }
  const text = await res.text();
  if (!res.ok) {
    const error = errorFrom(res.status, text);
    if (error.code === 'rest_not_logged_in' && !path.startsWith('/auth/')) sessionLost();
    throw error;
  }
  return { body: json(text) as T, headers: res.headers };
}

export const get = async <T>(path: string) => (await request<T>('GET', path)).body;
export const post = async <T>(path: string, body: unknown = {}) =>
  (await request<T>('POST', path, body)).body;
export const patch = async <T>(path: string, body: unknown) => (await request<T>('PATCH', path, body)).body;
export const put = async <T>(path: string, body: unknown) => (await request<T>('PUT', path, body)).body;
export const del = async <T>(path: string) => (await request<T>('DELETE', path)).body;

/** One page of a list the server paginates, with its total from `X-WP-Total` (docs/api.md). */
export async function getPage<T>(path: string): Promise<{ rows: T[]; total: number }> {
  const res = await request<T[]>('GET', path);
  return { rows: res.body, total: Number(res.headers.get('x-wp-total') ?? res.body.length) };
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
export function upload<T>(
  path: string,
  fields: [string, string][],
  file: File,
  onProgress: (sent: number, total: number) => void,
): { done: Promise<T>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<T>((resolve, reject) => {
    const form = new FormData();
    for (const [k, v] of fields) form.append(k, v);
    form.append('file', file, file.name);
    xhr.open('POST', `/v1${path}`);
    xhr.setRequestHeader('accept', 'application/json');
    if (nonce) xhr.setRequestHeader('x-rest-nonce', nonce);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(json(xhr.responseText) as T);
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
