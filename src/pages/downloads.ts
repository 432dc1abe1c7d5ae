import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import { maskKey } from '../modules/audit/audit.model.js';
import type {
  AccountDownload,
  AccountDownloadsService,
} from '../modules/distribution/account-downloads.service.js';
import { accountNav } from './account-nav.js';
import { formUser, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { contentSecurityPolicy, seeOther, sendPage, type Viewer } from './layout.js';

export interface DownloadsPagesOptions {
  accounts: AccountsService;
  downloads: AccountDownloadsService;
  /** The store's PUBLIC_URL origin, where download URLs point. */
  origin: () => string;
}

/** Why a row cannot download, or why a Download was refused, in words; the code goes in `data-code`. */
const WHY: Record<string, string> = {
  revoked: 'This license is revoked.',
  expired: 'This license has expired. Renew it to download again.',
  subscription_inactive: 'The subscription of this license is not active. Renew it to download again.',
  license_inactive: 'This license is not active.',
  invalid_usage_expiry: 'This license cannot be used. Please contact the store.',
  licensing_unavailable: 'Downloads are paused by the store. Please try again later.',
  module_disabled: 'Downloads are switched off by the store.',
  release_not_entitled:
    'Your license is not entitled to this release: its updates period ended before it was published.',
  release_product_not_entitled: 'Your license is not entitled to this release.',
  license_usage_inactive: 'Your license is not entitled to this release.',
  no_eligible_release: 'No release is available yet.',
  license_not_found: 'That license was not found among yours.',
  release_not_found: 'That release was not found for this license.',
  release_withdrawn: 'That release has been withdrawn. Reload the page to see the current one.',
  release_not_published: 'That release is not published. Reload the page to see the current one.',
  software_product_unavailable: 'This product is no longer available for download.',
  license_policy_changed: 'This product is now free: download it from its product page.',
  updater_external_link_prohibited: 'This release is downloaded from the vendor’s site.',
  unauthorized: 'That license is not yours.',
  rate_limited: 'Too many downloads of this license in a minute. Please try again in a minute.',
};
const FILE_PROBLEM = 'The file is not available right now. Please try again later.';
const why = (code: string) => WHY[code] ?? FILE_PROBLEM;

const ID = /^[1-9][0-9]{0,9}$/;
const isId = (raw: string) => ID.test(raw) && Number(raw) <= 2147483647;

function size(bytes: number | null): string {
  if (bytes === null) return '—';
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function downloadRow(d: AccountDownload, viewer: Viewer) {
  const name = d.variation_name ? `${d.product.name} — ${d.variation_name}` : d.product.name;
  const r = d.release;
  let action: unknown;
  if (d.state === 'ready' && r) {
    action = html`<form method="post" action="/account/downloads/${d.license_id}/${r.version_id}">
      <input type="hidden" name="_nonce" value="${viewer.nonce}">
      <button type="submit" class="primary small" aria-label="Download ${name} ${r.version}">Download</button>
    </form>`;
  } else if (d.state === 'external') {
    // An external link is handed out only for a site identity (docs/distribution.md, '5. External
    // links'); the page has none, so it says where to go.
    action = html`<span class="muted" data-code="external">${why('updater_external_link_prohibited')}</span>`;
  } else {
    action = html`<span class="why" data-code="${d.code ?? ''}">${why(d.code ?? '')}</span>`;
  }
  return html`<tr data-license="${d.license_id}">
    <td data-label="Product">${name}</td>
    <td data-label="License key"><span class="key">${maskKey(d.license_key)}</span></td>
    <td data-label="Version">${r ? r.version : '—'}</td>
    <td data-label="Released" class="when">${r?.release_date ? r.release_date.slice(0, 10) : '—'}</td>
    <td data-label="Size" class="when">${r ? size(r.file_size) : '—'}</td>
    <td data-label="Download">${action}</td>
  </tr>`;
}

/**
 * Downloads (/account/downloads, docs/storefront.md 'Downloads'): each license of a protected
 * software product with the release it may install, and Download, a form that mints an account
 * token (docs/distribution.md, 'What a token is bound to') and answers 303 to its download URL, so
 * the browser fetches the file from GET /v1/software/download. The bearer URL is only ever in that
 * Location header: never in a page, and `token=` is masked in the request logs (src/http/redact.ts).
 */
export async function downloadsPages(app: FastifyInstance, opts: DownloadsPagesOptions) {
  const { accounts, downloads } = opts;

  async function render(
    reply: FastifyReply,
    viewer: Viewer & { user: { id: number } },
    status: number,
    refusal: string | undefined,
  ) {
    let rows: AccountDownload[] = [];
    let off: string | undefined;
    try {
      rows = await downloads.accountDownloads(viewer.user.id);
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'module_disabled') throw e;
      off = e.code;
    }
    // Download's 303 leads to the download URL on PUBLIC_URL, which may be another origin than the
    // one the page was opened on: Chromium applies form-action to the redirect too.
    reply.header('content-security-policy', contentSecurityPolicy([new URL(opts.origin()).origin]));
    return sendPage(
      reply,
      status,
      'Downloads',
      html`${accountNav('downloads')}
<h1>Downloads</h1>
${refusal ? html`<p class="error" role="alert" data-code="${refusal}">${why(refusal)}</p>` : ''}
${
  off
    ? html`<section class="card"><p data-code="${off}">${why(off)}</p></section>`
    : rows.length === 0
      ? html`<section class="card"><p>You have no software to download yet. <a href="/">See the products</a></p></section>`
      : html`<section class="card"><p class="muted">Each Download gives you the file once; click again for another copy. Your sites receive updates through their license key.</p>
<table class="stack">
  <caption class="visually-hidden">Your software</caption>
  <thead><tr><th scope="col">Product</th><th scope="col">License key</th><th scope="col">Version</th><th scope="col">Released (UTC)</th><th scope="col">Size</th><th scope="col"><span class="visually-hidden">Download</span></th></tr></thead>
  <tbody>${rows.map((d) => downloadRow(d, viewer))}</tbody>
</table></section>`
}`,
      viewer,
    );
  }

  app.get('/account/downloads', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl('/account/downloads'));
    return render(reply, viewer, 200, undefined);
  });

  app.post('/account/downloads/:licenseId/:releaseId', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/downloads'));
    const viewer = { user, email: user.email, nonce: request.sessionNonce! };
    const { licenseId, releaseId } = request.params as { licenseId: string; releaseId: string };
    if (!isId(licenseId)) return render(reply, viewer, 404, 'license_not_found');
    if (!isId(releaseId)) return render(reply, viewer, 404, 'release_not_found');
    let url: string;
    try {
      url = (await downloads.mintAccountToken(user.id, Number(licenseId), Number(releaseId), request.ip))
        .download_url;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status >= 500) request.log.error({ err: e, code: e.code }, 'account download refused');
      const retryAfter = e.data?.retry_after;
      if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
      return render(reply, viewer, e.status, e.code);
    }
    // 303: the browser GETs the token's URL and receives the file (Content-Disposition: attachment).
    return reply.code(303).header('location', url).send();
  });
}
