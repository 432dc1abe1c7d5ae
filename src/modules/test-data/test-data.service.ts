import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { TokenInvalidationService } from '../distribution/token-invalidation.service.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';

/** How many rows of each kind a deletion of test data removed. */
export interface TestDataDeleted {
  orders: number;
  licenses: number;
  activations: number;
  download_tokens: number;
  subscriptions: number;
}

/**
 * Deletes what test mode made (docs/payments.md, 'Deleting test data'): the orders marked test,
 * the licenses issued for them with their activations and download tokens, and the subscriptions
 * they started. One transaction, so it is all or nothing; only rows marked test are touched, so it
 * is allowed in both modes. Built in src/wiring.ts, as it reaches four modules.
 */
export class TestDataService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly deps: {
      orders: OrdersService;
      licenses: LicenseService;
      subscriptions: SubscriptionsService;
      tokens: Pick<TokenInvalidationService, 'deleteOfTestLicenses'>;
      audit: AuditService;
    },
  ) {}

  delete(actor: Actor): Promise<TestDataDeleted> {
    const { orders, licenses, subscriptions, tokens, audit } = this.deps;
    return withTransaction(this.database, async (tx) => {
      // The subscriptions are found through their orders, and deleted once nothing names them.
      const started = await subscriptions.ofTestOrders(tx);
      const download_tokens = await tokens.deleteOfTestLicenses(tx);
      const deletedLicenses = await licenses.deleteTestLicenses(tx);
      const deletedOrders = await orders.deleteTestOrders(tx);
      const deleted: TestDataDeleted = {
        orders: deletedOrders,
        ...deletedLicenses,
        download_tokens,
        subscriptions: await subscriptions.deleteUnreferenced(started, tx),
      };
      const changes = Object.fromEntries(
        Object.entries(deleted).map(([kind, n]) => [kind, { before: n, after: 0 }]),
      );
      await audit.record(actor, { entity_type: 'test_data', entity_id: 0, action: 'delete', changes }, tx);
      return deleted;
    });
  }
}
