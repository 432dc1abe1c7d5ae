import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { currencyDecimals, fromMinor } from '../catalogue/money.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { StripeService } from '../stripe/stripe.service.js';
import type { ImportMap } from './import-map.js';
import { ImportRefusal, type Outcome, type Run } from './import-run.js';
import type { ImportCustomer, ImportProduct } from './records.js';

const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]{1,250}$/;

/**
 * The importer's customers (with the Stripe customer that renews them) and products with their
 * variations (docs/migrating.md, 'Importing'): the records every other kind refers to.
 */
export class PeopleImport {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly map: ImportMap,
    private readonly accounts: Pick<AccountsService, 'importCustomer'>,
    private readonly catalogue: Pick<
      CatalogueService,
      'findPublishedBySlug' | 'createProduct' | 'updateSoftwareConfig'
    >,
    private readonly stripe: Pick<StripeService, 'importedCard' | 'linkImported' | 'keepsCard'>,
    private readonly settings: Pick<SettingsService, 'get'>,
  ) {}

  async customer(run: Run, c: ImportCustomer): Promise<Outcome> {
    const known = await this.map.found(run, 'customers', c.sourceId);
    const stripeId =
      c.stripeCustomerId && STRIPE_CUSTOMER.test(c.stripeCustomerId) ? c.stripeCustomerId : null;
    if (known !== undefined) {
      // An earlier run's customer: their card is asked for again while none is kept (Stripe was
      // not set up then, or Stripe could not be reached).
      if (stripeId && !run.dryRun && !(await this.stripe.keepsCard(known))) {
        const stripe = await this.stripe.importedCard(stripeId);
        await withTransaction(this.database, (tx) => this.keepStripe(run, known, stripeId, stripe, tx));
      }
      return 'present';
    }
    if (run.dryRun) {
      run.plan('customers', c.sourceId);
      return 'created';
    }
    // Asked before the transaction: no transaction waits on Stripe.
    const stripe = stripeId ? await this.stripe.importedCard(stripeId) : undefined;
    return withTransaction(this.database, async (tx) => {
      const user = await this.accounts.importCustomer(
        {
          email: c.email,
          ...(c.firstName ? { first_name: c.firstName } : {}),
          ...(c.lastName ? { last_name: c.lastName } : {}),
          ...(c.passwordHash ? { password_hash: c.passwordHash } : {}),
        },
        tx,
      );
      if (stripeId) await this.keepStripe(run, user.id, stripeId, stripe, tx);
      await this.map.remember(run, 'customers', c.sourceId, user.id, tx);
      return user.created ? 'created' : 'present';
    });
  }

  /**
   * The customer's Stripe customer, with the card Stripe renews them on when the store takes
   * Stripe (`stripe` undefined: not set up yet, the card is asked for at the next run). One
   * Stripe no longer knows (null) is not kept: nothing could be charged to it.
   */
  private async keepStripe(
    run: Run,
    userId: number,
    customerId: string,
    stripe: Awaited<ReturnType<StripeService['importedCard']>>,
    tx: Tx,
  ): Promise<void> {
    if (stripe === null) return;
    await this.stripe.linkImported(userId, customerId, stripe?.card ?? null, tx);
    run.stripe.customers++;
    if (stripe?.card) run.stripe.cards++;
  }

  async product(run: Run, p: ImportProduct): Promise<Outcome> {
    const known = await this.map.found(run, 'products', p.sourceId);
    if (known !== undefined) return 'present';
    if (!p.slug) throw new ImportRefusal('missing_slug');
    if (run.dryRun) {
      run.plan('products', p.sourceId);
      for (const v of p.variations) run.plan('variations', v.sourceId);
      return 'created';
    }
    // A product with that slug is the one: made by an earlier run that stopped before its map
    // row, or by the owner, who created it before importing.
    let [product] = await this.catalogue.findPublishedBySlug(p.slug);
    const made = product === undefined;
    if (!product) {
      const settings = await this.settings.get();
      const decimals = currencyDecimals(settings.base_currency, settings);
      const money = (minor: number) => fromMinor(minor, decimals);
      product = await this.catalogue.createProduct({
        name: p.name.slice(0, 200),
        status: 'publish',
        type: p.variations.length > 0 ? 'variable' : 'simple',
        ...(p.variations.length > 0 ? {} : { price: money(p.price) }),
        virtual: true,
        ...(p.activationLimit !== undefined ? { activation_limit: p.activationLimit } : {}),
        ...(p.variations.length > 0
          ? {
              variations: p.variations.map((v) => ({
                name: v.name.slice(0, 200),
                price: money(v.price),
                attributes: { option: v.name.slice(0, 200) },
                ...(v.activationLimit !== undefined ? { activation_limit: v.activationLimit } : {}),
              })),
            }
          : {}),
      });
      await this.catalogue.updateSoftwareConfig(product.id, {
        slug: p.slug,
        software_enabled: 'yes',
        legacy_api: true,
      });
    }
    const id = product.id;
    const variations = product.variations;
    await withTransaction(this.database, async (tx) => {
      await this.map.remember(run, 'products', p.sourceId, id, tx);
      // Variations in the order given; found again by name when the product was there before.
      for (const [i, v] of p.variations.entries()) {
        const match = made ? variations[i] : variations.find((x) => x.name === v.name);
        if (match) await this.map.remember(run, 'variations', v.sourceId, match.id, tx);
      }
    });
    return made ? 'created' : 'present';
  }
}
