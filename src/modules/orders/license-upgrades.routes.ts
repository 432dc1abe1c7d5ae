import { Type } from 'typebox';
import { iso } from '../../clock.js';
import { requireAdmin, requireUser } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import type { EntitlementPolicy } from '../catalogue/catalogue.model.js';
import { Nullable } from '../catalogue/catalogue.schemas.js';
import { licenseOrderAnswer } from './license-renewals.routes.js';
import { money, type UpgradeQuote, type UpgradeService } from './license-upgrades.service.js';

const Money = (description: string) => Type.String({ description });

const UpgradeQuoteResponse = Type.Object({
  license_id: Type.Integer(),
  currency: Type.String({ description: "The store's base currency; every amount is in it" }),
  paid: Money('What was paid for the current tier'),
  credit: Money('The unused share of it: floor(paid × days_left ÷ period_days); all of it without an end'),
  days_left: Nullable(Type.Integer({ description: 'Whole days left of the current period; null = no end' })),
  period_days: Nullable(Type.Integer({ description: 'Length of the current period in days; null = no end' })),
  next_payment_at: Nullable(
    Type.String({
      description:
        "For a license a subscription renews: the subscription's next payment date, where the current period ends and which a move keeps; each target's price is what renewals then charge. Null for a term license",
    }),
  ),
  targets: Type.Array(
    Type.Object({
      product_id: Type.Integer(),
      variation_id: Type.Integer({ description: '0 for a simple product' }),
      name: Type.String(),
      direction: Type.Enum(['upgrade', 'downgrade']),
      price: Money("The tier's price"),
      total: Money('What the move costs now: price less credit, never below 0'),
      activation_limit: Type.Integer({ description: '0 = unlimited' }),
      usage_days: Nullable(
        Type.Integer({ description: 'The new term in days from payment; null = lifetime' }),
      ),
      updates_days: Nullable(
        Type.Integer({ description: 'The new updates window in days; null = while licensed' }),
      ),
    }),
  ),
});

const UpgradeOrderBody = Type.Object(
  {
    variation_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    product_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    coupon_code: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'A coupon taken off the prorated price, before tax',
      }),
    ),
  },
  { additionalProperties: false },
);

const UpgradeOrder = Type.Object({
  order_id: Type.Integer(),
  order_key: Type.String({ description: 'With the id, what pay-order and the receipt take' }),
  status: Type.String({
    description: '`pending` to pay; `completed` when it cost nothing and the move applied',
  }),
  currency: Type.String(),
  total: Type.String(),
  license_id: Type.Integer(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
});

function quoteView(q: UpgradeQuote) {
  const m = (minor: number) => money(minor, q.currency);
  return {
    license_id: q.license.id,
    currency: q.currency.code,
    paid: m(q.paid),
    credit: m(q.credit),
    days_left: q.days_left,
    period_days: q.period_days,
    next_payment_at: q.billing?.next_payment_at ? iso(q.billing.next_payment_at) : null,
    targets: q.targets.map((t) => {
      const policy = (t.variation?.entitlement_policy ??
        t.product.entitlement_policy) as EntitlementPolicy | null;
      return {
        product_id: t.product.id,
        variation_id: t.variation?.id ?? 0,
        name: t.variation ? `${t.product.name} - ${t.variation.name}` : t.product.name,
        direction: t.full > q.current_price ? ('upgrade' as const) : ('downgrade' as const),
        price: m(t.full),
        total: m(t.price),
        activation_limit: t.activation_limit,
        usage_days: policy?.usage.mode === 'days' ? (policy.usage.days ?? null) : null,
        updates_days: policy?.updates.mode === 'days' ? (policy.updates.days ?? null) : null,
      };
    }),
  };
}

/** Upgrades and downgrades of a license (docs/selling.md, 'Upgrades and downgrades'). */
export async function upgradeRoutes(app: App, opts: { upgrades: UpgradeService }) {
  const { upgrades } = opts;

  for (const who of ['account', 'admin'] as const) {
    const base = who === 'account' ? '/account/licenses/:id' : '/licenses/:id';
    const guard = who === 'account' ? requireUser : requireAdmin;
    const whose = who === 'account' ? 'one of my licenses' : "a customer's license (administrator)";
    app.get(
      `${base}/upgrades`,
      {
        preValidation: guard,
        schema: {
          tags: ['licensing'],
          summary: `The tiers ${whose} may move to, each with its prorated price`,
          params: IdParams,
          response: { 200: UpgradeQuoteResponse, ...errors(401, 404, 409) },
        },
      },
      async (request) =>
        quoteView(await upgrades.quote(request.params.id, who === 'account' ? request.user!.id : null)),
    );
    app.post(
      `${base}/upgrade-order`,
      {
        preValidation: guard,
        schema: {
          tags: ['licensing'],
          summary: `Create the order moving ${whose} to another tier; paying it moves the license, keeping its key`,
          params: IdParams,
          body: UpgradeOrderBody,
          response: { 201: UpgradeOrder, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const { order, target } = await upgrades.createOrder(
          request.params.id,
          who === 'account' ? request.user!.id : null,
          request.body,
          who === 'admin' ? actorOf(request) : undefined,
        );
        return reply.code(201).send({
          ...licenseOrderAnswer(order, request.params.id),
          product_id: target.product.id,
          variation_id: target.variation?.id ?? 0,
        });
      },
    );
  }
}
