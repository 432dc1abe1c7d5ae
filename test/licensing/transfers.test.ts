import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { admin, advanceClock, createTestApp, expectError, post, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import {
  type Customer,
  createCustomer,
  createLicense,
  createProduct,
  identity,
  uniqueEmail,
} from '../helpers/factories.js';
import { type Cluster, startCluster } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { connectMail, type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';

/**
 * License transfers (docs/selling.md, 'Transfers'): offered by the owner or the license's
 * customer, accepted once by the emailed link, on SQLite and PostgreSQL.
 */
let t: TestApp;
let smtp: Smtp;
let productId: number;

beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await connectMail(t, smtp.url());
  t.app.services.mailWorker.start();
  productId = (await createProduct(t, { name: 'Transfer Pro', activation_limit: 3 })).id;
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const db = () => t.app.services.database.db;
const licenseOf = (owner: { id: number }) => createLicense(t, { product_id: productId, user_id: owner.id });
const offerAsAdmin = (licenseId: number, body: unknown) =>
  admin(t, 'POST', `/licenses/${licenseId}/transfers`, body);
const offerAsCustomer = (who: Customer, licenseId: number, body: unknown) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/account/licenses/${licenseId}/transfers`,
    headers: who.headers,
    payload: body as object,
  });
const accept = (token: string, headers: Record<string, string> = {}) =>
  post(t, '/transfers/accept', { token }, headers);
/** The link's token as the mail worker mints it when it sends the email. */
/**
 * A fresh link's token, as the email's would be. The mail worker mints one when it sends the
 * email, and a new token replaces the old: the email goes first, or this token would stop working.
 */
const tokenOf = async (transferId: number) => {
  const { to_email } = await db()
    .selectFrom('license_transfers')
    .select('to_email')
    .where('id', '=', transferId)
    .executeTakeFirstOrThrow();
  await waitFor(async () => {
    const sent = await db()
      .selectFrom('mail_messages')
      .select('status')
      .where('recipient', '=', to_email)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return sent !== undefined && sent.status !== 'pending';
  }, 'the transfer email sent');
  return (await t.app.services.transfers.mintToken(transferId))!;
};
const ownerOf = async (licenseId: number) =>
  (await db().selectFrom('licenses').select('user_id').where('id', '=', licenseId).executeTakeFirstOrThrow())
    .user_id;
const activate = async (key: string, domain: string) => {
  const res = await post(t, '/licenses/activate', { license_key: key, ...identity(domain) });
  expect(res.statusCode, res.body).toBe(200);
};
const activeSites = async (licenseId: number) =>
  (
    await db()
      .selectFrom('activations')
      .select('id')
      .where('license_id', '=', licenseId)
      .where('status', '=', 'active')
      .execute()
  ).length;

describe(`offering and accepting (${dialectUnderTest})`, () => {
  it('the owner offers a license; the receiver gets an email whose link accepts once, and the license, webhook and audit follow', async () => {
    const sender = await createCustomer(t);
    const receiver = await createCustomer(t);
    const license = await licenseOf(sender);
    await activate(license.license_key, 'kept.example');
    const res = await offerAsAdmin(license.id, { email: receiver.email.toUpperCase() });
    expect(res.statusCode, res.body).toBe(201);
    const offered = res.json();
    expect(offered).toMatchObject({
      license_id: license.id,
      from_user_id: sender.id,
      to_email: receiver.email,
      keep_activations: true,
      status: 'pending',
      to_user_id: null,
    });
    expect(Date.parse(offered.expires_at) - Date.parse(offered.created_at)).toBe(7 * 86_400_000);

    const mail = await waitForMail(smtp, receiver.email, /Transfer Pro/);
    const link = /\/account\/transfers\/accept\?token=([0-9a-f]{64})/.exec(mail.text);
    expect(link, mail.text).toBeTruthy();
    const token = link![1]!;
    const row = await db()
      .selectFrom('license_transfers')
      .selectAll()
      .where('id', '=', offered.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(token));
    const stored = await db().selectFrom('mail_messages').select('data').execute();
    expect(stored.some((m) => m.data.includes(token))).toBe(false);

    const accepted = await accept(token);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ id: offered.id, status: 'accepted', to_user_id: receiver.id });
    expect(await ownerOf(license.id)).toBe(receiver.id);
    expect(await activeSites(license.id)).toBe(1);
    expectError(await accept(token), 409, 'transfer_already_accepted');

    const events = await db()
      .selectFrom('webhook_events')
      .select('payload')
      .where('event', '=', 'license.transferred')
      .execute();
    const data = events.map((e) => JSON.parse(e.payload).data);
    expect(data).toContainEqual({ license_id: license.id, from_user_id: sender.id, to_user_id: receiver.id });
    const audit = await db()
      .selectFrom('audit_events')
      .select(['action', 'actor_user_id'])
      .where('entity_type', '=', 'license')
      .where('entity_id', '=', license.id)
      .execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['transfer_offer', 'transfer']));
    expect(audit.find((a) => a.action === 'transfer')!.actor_user_id).toBe(receiver.id);

    // The license is the receiver's now: in their list, not the sender's.
    const mine = await t.app.inject({
      method: 'GET',
      url: '/v1/account/licenses',
      headers: receiver.headers,
    });
    expect(mine.json().map((l: { id: number }) => l.id)).toContain(license.id);
    const theirs = await t.app.inject({
      method: 'GET',
      url: '/v1/account/licenses',
      headers: sender.headers,
    });
    expect(theirs.json().map((l: { id: number }) => l.id)).not.toContain(license.id);
  });

  it('a customer offers their own license without its sites: accepting deactivates them and makes the new account', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    await activate(license.license_key, 'one.example');
    await activate(license.license_key, 'two.example');
    const email = uniqueEmail('new-receiver');
    const res = await offerAsCustomer(sender, license.id, { email, keep_activations: false });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().keep_activations).toBe(false);
    const listed = await t.app.inject({
      method: 'GET',
      url: '/v1/account/transfers',
      headers: sender.headers,
    });
    expect(listed.json().map((x: { id: number }) => x.id)).toEqual([res.json().id]);

    const accepted = await accept(await tokenOf(res.json().id));
    expect(accepted.statusCode, accepted.body).toBe(200);
    const user = await db()
      .selectFrom('users')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    expect(user.role).toBe('customer');
    expect(user.password_set).toBe(0);
    expect(await ownerOf(license.id)).toBe(user.id);
    expect(await activeSites(license.id)).toBe(0);
  });

  it('a new offer replaces the pending one, whose link stops working', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const first = (await offerAsAdmin(license.id, { email: uniqueEmail('first') })).json();
    const firstToken = await tokenOf(first.id);
    const second = await offerAsAdmin(license.id, { email: uniqueEmail('second') });
    expect(second.statusCode).toBe(201);
    expectError(await accept(firstToken), 404, 'transfer_not_found');
    const history = (await admin(t, 'GET', `/licenses/${license.id}/transfers`)).json();
    expect(history.map((x: { status: string }) => x.status)).toEqual(['pending', 'replaced']);
    expect((await accept(await tokenOf(second.json().id))).statusCode).toBe(200);
  });

  it('the sender cancels a pending offer; its link, a second cancel and other customers are refused', async () => {
    const sender = await createCustomer(t);
    const stranger = await createCustomer(t);
    const license = await licenseOf(sender);
    const offered = (await offerAsCustomer(sender, license.id, { email: uniqueEmail('cancelled') })).json();
    const token = await tokenOf(offered.id);
    const cancel = (who: Customer) =>
      t.app.inject({ method: 'DELETE', url: `/v1/account/transfers/${offered.id}`, headers: who.headers });
    expectError(await cancel(stranger), 404, 'transfer_not_found');
    const res = await cancel(sender);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('cancelled');
    expectError(await cancel(sender), 404, 'transfer_not_found');
    expectError(await accept(token), 404, 'transfer_not_found');
    expect(await ownerOf(license.id)).toBe(sender.id);
    expectError(await admin(t, 'DELETE', '/transfers/2147483647'), 404, 'transfer_not_found');
  });

  it('an accepted offer cannot be cancelled (409 transfer_already_accepted)', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const offered = (await offerAsAdmin(license.id, { email: uniqueEmail('done') })).json();
    expect((await accept(await tokenOf(offered.id))).statusCode).toBe(200);
    expectError(await admin(t, 'DELETE', `/transfers/${offered.id}`), 409, 'transfer_already_accepted');
  });

  it('the email of a transfer cancelled before it left is never sent, and not retried', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const email = uniqueEmail('never-mailed');
    smtp.refuseWith = 554;
    try {
      const offered = (await offerAsAdmin(license.id, { email })).json();
      const message = () =>
        db().selectFrom('mail_messages').selectAll().where('recipient', '=', email).executeTakeFirstOrThrow();
      await waitFor(async () => (await message()).attempts >= 1, 'a first attempt, refused');
      expect((await admin(t, 'DELETE', `/transfers/${offered.id}`)).statusCode).toBe(200);
      smtp.refuseWith = null;
      await advanceClock(t, 120);
      await waitFor(async () => (await message()).status === 'failed', 'the message given up');
      expect((await message()).attempts).toBe(2);
      expect(smtp.received.some((m) => m.to.includes(email))).toBe(false);
    } finally {
      smtp.refuseWith = null;
    }
  });

  it('a link past 7 days is 410 transfer_expired and changes nothing', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const offered = (await offerAsAdmin(license.id, { email: uniqueEmail('late') })).json();
    const token = await tokenOf(offered.id);
    await advanceClock(t, 7 * 86_400 + 1);
    expectError(await accept(token), 410, 'transfer_expired');
    expect(await ownerOf(license.id)).toBe(sender.id);
    const history = (await admin(t, 'GET', `/licenses/${license.id}/transfers`)).json();
    expect(history[0].status).toBe('expired');
    // No new link is minted for an expired offer; a new offer replaces it.
    expect(await t.app.services.transfers.mintToken(offered.id)).toBeNull();
    expect((await offerAsAdmin(license.id, { email: uniqueEmail('again') })).statusCode).toBe(201);
  });
});

describe(`refusals (${dialectUnderTest})`, () => {
  it('400 transfer_to_self: the email of the license owner (any case)', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    expectError(
      await offerAsCustomer(sender, license.id, { email: sender.email.toUpperCase() }),
      400,
      'transfer_to_self',
    );
    expectError(await offerAsAdmin(license.id, { email: sender.email }), 400, 'transfer_to_self');
  });

  it('409 license_not_transferable: a revoked license, offered or accepted', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const offered = (await offerAsAdmin(license.id, { email: uniqueEmail('revoked') })).json();
    const token = await tokenOf(offered.id);
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    expectError(await accept(token), 409, 'license_not_transferable');
    expectError(await offerAsAdmin(license.id, { email: uniqueEmail('x') }), 409, 'license_not_transferable');
    expect(await ownerOf(license.id)).toBe(sender.id);
  });

  it('404 license_not_found: another customer’s license, or none', async () => {
    const sender = await createCustomer(t);
    const stranger = await createCustomer(t);
    const license = await licenseOf(sender);
    expectError(
      await offerAsCustomer(stranger, license.id, { email: uniqueEmail() }),
      404,
      'license_not_found',
    );
    expectError(await offerAsAdmin(2147483647, { email: uniqueEmail() }), 404, 'license_not_found');
    expectError(await admin(t, 'GET', '/licenses/2147483647/transfers'), 404, 'license_not_found');
  });

  it('403 transfer_wrong_account: a session of another account accepting', async () => {
    const sender = await createCustomer(t);
    const receiver = await createCustomer(t);
    const other = await createCustomer(t);
    const license = await licenseOf(sender);
    const offered = (await offerAsAdmin(license.id, { email: receiver.email })).json();
    const token = await tokenOf(offered.id);
    expectError(await accept(token, other.headers), 403, 'transfer_wrong_account');
    expect(await ownerOf(license.id)).toBe(sender.id);
    expect((await accept(token, receiver.headers)).statusCode).toBe(200);
  });

  it('404 transfer_not_found for unknown, malformed and hostile tokens', async () => {
    for (const token of ['0'.repeat(64), 'nope', "' OR 1=1 --", '<script>', 'A'.repeat(64), '']) {
      expectError(await accept(token), 404, 'transfer_not_found');
    }
  });

  it('429 too_many_transfers: a customer past 10 offers an hour', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    for (let i = 0; i < 10; i++) {
      expect((await offerAsCustomer(sender, license.id, { email: uniqueEmail('many') })).statusCode).toBe(
        201,
      );
    }
    expectError(
      await offerAsCustomer(sender, license.id, { email: uniqueEmail('many') }),
      429,
      'too_many_transfers',
    );
  });

  it('401 without a session, 403 for a customer on the owner routes', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    expectError(
      await post(t, `/account/licenses/${license.id}/transfers`, { email: uniqueEmail() }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await post(t, `/licenses/${license.id}/transfers`, { email: uniqueEmail() }),
      401,
      'rest_not_logged_in',
    );
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/licenses/${license.id}/transfers`,
      headers: sender.headers,
      payload: { email: uniqueEmail() },
    });
    expectError(res, 403, 'rest_forbidden');
  });

  it('malformed, mistyped, unknown, huge and hostile input is a specific 4xx and changes nothing', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const before = await db().selectFrom('license_transfers').select('id').execute();
    const raw = (url: string, payload: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url,
        payload,
        headers: { 'content-type': 'application/json', ...headers },
      });
    const offerUrl = `/v1/account/licenses/${license.id}/transfers`;
    expectError(await raw(offerUrl, '{"email":', sender.headers), 400, 'rest_invalid_json');
    expectError(await raw('/v1/transfers/accept', '{"token":'), 400, 'rest_invalid_json');
    for (const body of [
      { email: 42 },
      { email: 'not an email' },
      { email: 'a@example.com', keep_activations: 'no' },
      { email: `x\u0000@example.com` },
      { email: `<script>alert(1)</script>@example.com` },
      { email: `${'a'.repeat(300)}@example.com` },
      {},
      [],
    ]) {
      const res = await offerAsCustomer(sender, license.id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(['rest_invalid_param', 'rest_missing_param', 'invalid_parameters']).toContain(res.json().code);
    }
    expectError(
      await offerAsCustomer(sender, license.id, { email: uniqueEmail(), admin: true }),
      400,
      'invalid_parameters',
    );
    expectError(
      await post(t, '/transfers/accept', { token: 'a'.repeat(64), extra: 1 }),
      400,
      'invalid_parameters',
    );
    expect((await post(t, '/transfers/accept', { token: 7 })).statusCode).toBe(400);
    expect((await post(t, '/transfers/accept', { token: 'a'.repeat(5000) })).statusCode).toBe(400);
    const huge = await raw(
      offerUrl,
      JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(2_000_000) }),
      sender.headers,
    );
    expectError(huge, 413, 'rest_body_too_large');
    const bad = await t.app.inject({
      method: 'DELETE',
      url: '/v1/account/transfers/abc',
      headers: sender.headers,
    });
    expect(bad.statusCode).toBe(400);
    expect(await db().selectFrom('license_transfers').select('id').execute()).toEqual(before);
  });
});

describe(`the pages (${dialectUnderTest})`, () => {
  const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
    });
  const signedIn = (who: Customer) => ({ cookie: who.headers.cookie });

  it('My licenses sends a transfer, shows it pending with Cancel, and cancels it', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const nonce = sender.headers['x-rest-nonce'];
    const url = `/account/licenses/${license.id}/transfer`;
    const bad = await form(url, { _nonce: nonce, email: 'not an email' }, signedIn(sender));
    expect([bad.statusCode, bad.headers.location]).toEqual([303, '/account/licenses?error=invalid_email']);
    const self = await form(url, { _nonce: nonce, email: sender.email }, signedIn(sender));
    expect(self.headers.location).toBe('/account/licenses?error=transfer_to_self');
    const forged = await form(url, { _nonce: 'f'.repeat(32), email: uniqueEmail() }, signedIn(sender));
    expect(forged.statusCode).toBe(403);
    const email = uniqueEmail('page-receiver');
    const sent = await form(url, { _nonce: nonce, email }, signedIn(sender));
    expect(sent.headers.location).toBe('/account/licenses?notice=transfer_sent');
    const pending = (
      await t.app.inject({ method: 'GET', url: '/v1/account/transfers', headers: sender.headers })
    ).json();
    expect(pending).toMatchObject([{ license_id: license.id, to_email: email, keep_activations: false }]);
    const page = await t.app.inject({ method: 'GET', url: '/account/licenses', headers: signedIn(sender) });
    expect(page.body).toContain(`Transfer to <strong>${email}</strong> pending until`);
    expect(page.body).toContain(`action="/account/transfers/${pending[0].id}/cancel"`);
    const cancelled = await form(
      `/account/transfers/${pending[0].id}/cancel`,
      { _nonce: nonce },
      signedIn(sender),
    );
    expect(cancelled.headers.location).toBe('/account/licenses?notice=transfer_cancelled');
    const again = await form(
      `/account/transfers/${pending[0].id}/cancel`,
      { _nonce: nonce },
      signedIn(sender),
    );
    expect(again.headers.location).toBe('/account/licenses?error=transfer_not_found');
  });

  it('the link’s page accepts only by its form, signs the receiver in, and says why a link does not work', async () => {
    const sender = await createCustomer(t);
    const license = await licenseOf(sender);
    const email = uniqueEmail('page-new');
    const offered = (await offerAsAdmin(license.id, { email })).json();
    const token = await tokenOf(offered.id);
    for (const bad of ['', 'abc', '%3Cscript%3E', '0'.repeat(64)]) {
      const res = await t.app.inject({ method: 'GET', url: `/account/transfers/accept?token=${bad}` });
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('data-code="transfer_not_found"');
    }
    const shown = await t.app.inject({ method: 'GET', url: `/account/transfers/accept?token=${token}` });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('Accept the license');
    expect(await ownerOf(license.id)).toBe(sender.id);
    const csrf = shown.cookies.find((c) => c.name === 'tollgate_form')!.value;
    const noCsrf = await form('/account/transfers/accept', { token });
    expect(noCsrf.statusCode).toBe(403);
    expect(await ownerOf(license.id)).toBe(sender.id);
    const accepted = await form(
      '/account/transfers/accept',
      { token, _csrf: csrf },
      { cookie: `tollgate_form=${csrf}` },
    );
    expect([accepted.statusCode, accepted.headers.location]).toEqual([
      303,
      '/account/licenses?notice=transfer_accepted',
    ]);
    const session = accepted.cookies.find((c) => c.name === 'tollgate_session')!.value;
    const me = await t.app.inject({
      method: 'GET',
      url: '/v1/auth/me',
      headers: { cookie: `tollgate_session=${session}` },
    });
    expect(me.json().user.email).toBe(email);
    expect(await ownerOf(license.id)).toBe(me.json().user.id);
    const used = await t.app.inject({ method: 'GET', url: `/account/transfers/accept?token=${token}` });
    expect(used.statusCode).toBe(409);
    expect(used.body).toContain('data-code="transfer_already_accepted"');
  });

  it('someone signed in to another account is asked to sign out first', async () => {
    const sender = await createCustomer(t);
    const other = await createCustomer(t);
    const license = await licenseOf(sender);
    const offered = (await offerAsAdmin(license.id, { email: uniqueEmail('page-other') })).json();
    const token = await tokenOf(offered.id);
    const res = await t.app.inject({
      method: 'GET',
      url: `/account/transfers/accept?token=${token}`,
      headers: signedIn(other),
    });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('data-code="transfer_wrong_account"');
    const posted = await form(
      '/account/transfers/accept',
      { token, _nonce: other.headers['x-rest-nonce'] },
      signedIn(other),
    );
    expect(posted.statusCode).toBe(403);
    expect(posted.body).toContain('data-code="transfer_wrong_account"');
    expect(await ownerOf(license.id)).toBe(sender.id);
  });
});

describe(`parallel requests over real HTTP (${dialectUnderTest})`, () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('10 parallel offers of one license: each replaces the last, one stays pending', async () => {
    const send = async (i: number, path: string, body: unknown) => {
      const server = cluster.servers[i % cluster.servers.length]!;
      const res = await fetch(`${server.url}/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...cluster.adminHeaders },
        body: JSON.stringify(body),
      });
      return res.status;
    };
    const user = await fetch(`${cluster.servers[0]!.url}/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...cluster.adminHeaders },
      body: JSON.stringify({ email: uniqueEmail('offers'), password: 'race-password-1', role: 'customer' }),
    });
    const product = await fetch(`${cluster.servers[0]!.url}/v1/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...cluster.adminHeaders },
      body: JSON.stringify({ name: 'Offers', type: 'simple', price: '10.00', licensing_enabled: 'yes' }),
    });
    const license = await fetch(`${cluster.servers[0]!.url}/v1/licenses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...cluster.adminHeaders },
      body: JSON.stringify({
        product_id: ((await product.json()) as { id: number }).id,
        user_id: ((await user.json()) as { id: number }).id,
      }),
    });
    const licenseId = ((await license.json()) as { id: number }).id;
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        send(i, `/licenses/${licenseId}/transfers`, { email: uniqueEmail('offer') }),
      ),
    );
    expect(statuses).toEqual(Array(10).fill(201));
    const rows = await cluster.database.database.db
      .selectFrom('license_transfers')
      .select('status')
      .where('license_id', '=', licenseId)
      .execute();
    expect(rows.filter((r) => r.status === 'pending')).toHaveLength(1);
    expect(rows.filter((r) => r.status === 'replaced')).toHaveLength(9);
  });

  it('20 parallel accepts: one 200, 19 × 409 transfer_already_accepted, one owner, one event', async () => {
    const base = cluster.servers[0]!.url;
    const send = async (i: number, method: string, path: string, body?: unknown, headers = {}) => {
      const server = cluster.servers[i % cluster.servers.length]!;
      const res = await fetch(`${server.url}/v1${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const user = async (email: string) =>
      (
        await send(
          0,
          'POST',
          '/users',
          { email, password: 'race-password-1', role: 'customer' },
          cluster.adminHeaders,
        )
      ).body.id as number;
    const senderId = await user(uniqueEmail('race-sender'));
    const receiverEmail = uniqueEmail('race-receiver');
    const product = await send(
      0,
      'POST',
      '/products',
      { name: 'Race', type: 'simple', price: '10.00', licensing_enabled: 'yes' },
      cluster.adminHeaders,
    );
    const license = await send(
      0,
      'POST',
      '/licenses',
      { product_id: product.body.id, user_id: senderId },
      cluster.adminHeaders,
    );
    expect(license.status).toBe(201);
    const offered = await send(
      0,
      'POST',
      `/licenses/${license.body.id}/transfers`,
      { email: receiverEmail },
      cluster.adminHeaders,
    );
    expect(offered.status, JSON.stringify(offered.body)).toBe(201);
    // The link as the mail worker mints it: only its hash is stored.
    const token = 'ab'.repeat(32);
    const database = cluster.database.database.db;
    await database
      .updateTable('license_transfers')
      .set({ token_hash: sha256(token) })
      .where('id', '=', offered.body.id as number)
      .execute();
    expect(base).toBeTruthy();

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i, 'POST', '/transfers/accept', { token })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect([r.status, r.body.code]).toEqual([409, 'transfer_already_accepted']);
    const receivers = await database
      .selectFrom('users')
      .select('id')
      .where('email', '=', receiverEmail)
      .execute();
    expect(receivers).toHaveLength(1);
    const owner = await database
      .selectFrom('licenses')
      .select('user_id')
      .where('id', '=', license.body.id as number)
      .executeTakeFirstOrThrow();
    expect(owner.user_id).toBe(receivers[0]!.id);
    const events = await database
      .selectFrom('webhook_events')
      .select('id')
      .where('event', '=', 'license.transferred')
      .execute();
    expect(events).toHaveLength(1);
  });
});
