import type { FastifyInstance } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import type { Approval, OAuthService } from '../modules/licensing/oauth.service.js';
import { formOf, formUser, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { contentSecurityPolicy, seeOther, sendPage, type Viewer } from './layout.js';

export interface ApproveOptions {
  accounts: AccountsService;
  oauth: OAuthService;
}

const seats = (view: Approval['view']) =>
  view.activation_limit === 0
    ? `${view.activation_count} in use, unlimited`
    : `${view.activation_count} of ${view.activation_limit} in use`;

function decisionForms(state: string, viewer: Viewer, approve: boolean) {
  const form = (
    decision: string,
    label: string,
    cls: string,
  ) => html`<form method="post" action="/account/approve">
      <input type="hidden" name="_nonce" value="${viewer.nonce}">
      <input type="hidden" name="state" value="${state}">
      <input type="hidden" name="decision" value="${decision}">
      <button type="submit" class="${cls}">${label}</button>
    </form>`;
  return html`<div class="actions">
    ${approve ? form('approve', 'Approve', 'primary') : ''}
    ${form('deny', approve ? 'Deny' : 'Cancel and return to the site', 'danger')}
  </div>`;
}

/**
 * The server-rendered approval page (docs/oauth.md; the flow that needs no JavaScript): the
 * owner sees which site (normalised domain) asks for which license, and approves or denies.
 */
export async function approvePages(app: FastifyInstance, opts: ApproveOptions) {
  const { accounts, oauth } = opts;

  app.get('/account/approve', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl(request.url));
    const state = (request.query as Record<string, unknown>).state;
    if (typeof state !== 'string' || state === '') throw new ApiError('missing_state');
    let approval: Approval;
    try {
      approval = await oauth.review(viewer.user.id, state);
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'unauthorized') throw e;
      // Another customer's license: offer to switch accounts or to go back, and show nothing of it.
      const { returnOrigin } = await oauth.returnTarget(state);
      reply.header('content-security-policy', contentSecurityPolicy([returnOrigin]));
      return sendPage(
        reply,
        403,
        'Not your license',
        html`<section class="card">
  <h1>This license belongs to another account</h1>
  <p>You are signed in as <strong>${viewer.email}</strong>, which does not own the license this site asks for.
  Sign in with the account that bought the license to approve the request.</p>
  <div class="actions">
    <form method="post" action="/account/sign-out">
      <input type="hidden" name="_nonce" value="${viewer.nonce}">
      <input type="hidden" name="next" value="${request.url}">
      <button type="submit" class="primary">Sign in with another account</button>
    </form>
  </div>
  ${decisionForms(state, viewer, false)}
</section>`,
        viewer,
      );
    }
    const { view, identity, returnOrigin, blocker } = approval;
    const product = view.variation_name ? `${view.product_name} — ${view.variation_name}` : view.product_name;
    reply.header('content-security-policy', contentSecurityPolicy([returnOrigin]));
    return sendPage(
      reply,
      200,
      'Approve activation',
      html`<section class="card">
  <h1>Approve site activation</h1>
  <p class="lead">The site <span class="site">${identity.domain_normalized}</span> asks to activate your license for
  <strong>${product}</strong>.</p>
  <dl class="facts">
    <dt>Site</dt><dd class="site">${identity.domain_normalized}</dd>
    <dt>Installation</dt><dd><code>${identity.installation_id}</code></dd>
    <dt>Product</dt><dd>${product}</dd>
    <dt>License key</dt><dd class="key">${view.license_key}</dd>
    <dt>Activations</dt><dd>${seats(view)}</dd>
    <dt>Afterwards</dt><dd>you return to ${returnOrigin}</dd>
  </dl>
  ${
    blocker === 'activation_limit_reached'
      ? html`<p class="warning">All activations of this license are in use, so the site will not be able to
  activate after you approve. <a href="/account/licenses">Deactivate a site in My licenses</a> first, then come back
  to this page.</p>`
      : ''
  }
  ${
    blocker === 'license_unusable'
      ? html`<p class="error">This license is ${view.status === 'revoked' ? 'revoked' : 'not active'} and cannot be
  activated on another site.</p>`
      : ''
  }
  <p class="muted">Approve only if you started this activation on that site yourself. The request expires 10 minutes
  after it was made; Deny sends you back to the site without activating anything.</p>
  ${decisionForms(state, viewer, blocker !== 'license_unusable')}
</section>`,
      viewer,
    );
  });

  app.post('/account/approve', async (request, reply) => {
    const form = formOf(request);
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, '/account/sign-in');
    if (!form.state) throw new ApiError('missing_state');
    if (form.decision === 'deny') return seeOther(reply, await oauth.deny(form.state));
    if (form.decision !== 'approve') throw new ApiError('missing_params');
    return seeOther(reply, await oauth.approve(user.id, form.state));
  });
}
