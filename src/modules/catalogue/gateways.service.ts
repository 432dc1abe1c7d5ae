import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { OFFLINE_GATEWAYS, TEST_GATEWAY } from './gateways.model.js';
import type { GatewayRow, GatewaysRepository } from './gateways.repository.js';
import type { GatewayPatchBody } from './gateways.schemas.js';
import { isKnownCurrency } from './money.js';

export interface Gateway {
  id: string;
  title: string;
  enabled: boolean;
  /** Currencies the gateway accepts; empty = all. */
  currencies: string[];
  /** How to pay an order that waits for this gateway's payment (bank transfer, cheque); '' = none. */
  instructions: string;
}

export class GatewaysService {
  constructor(
    private readonly repo: GatewaysRepository,
    private readonly database: Pick<Database, 'db'>,
    private readonly audit: AuditService,
    private readonly settings: SettingsService,
  ) {}

  async list(): Promise<Gateway[]> {
    return (await this.repo.list()).map(toGateway);
  }

  /** For checkout: the gateway, or null when the id names none. */
  async find(id: string, tx?: Tx): Promise<Gateway | null> {
    const row = await this.repo.find(id, tx);
    return row ? toGateway(row) : null;
  }

  /**
   * `actor`: the administrator who asked. The gateways are one object in the trail (entity_id 0,
   * as the settings), each changed field named after its gateway: `bacs.enabled`,
   * `bacs.currencies`, `bacs.instructions` (docs/admin.md, 'Audit trail').
   */
  async update(id: string, patch: GatewayPatchBody, actor?: Actor): Promise<Gateway> {
    const current = await this.repo.find(id);
    if (!current) throw new ApiError('gateway_not_found');
    // Test mode and live mode (docs/payments.md): a live store never offers the test card, and an
    // offline gateway is enabled only with the instructions its customers need to pay.
    if (id === TEST_GATEWAY && patch.enabled === true && (await this.settings.get()).store_mode === 'live') {
      throw new ApiError('test_mode_only');
    }
    if (OFFLINE_GATEWAYS.has(id) && (patch.enabled === true || patch.instructions !== undefined)) {
      const enabled = patch.enabled ?? current.enabled === 1;
      const instructions = patch.instructions?.trim() ?? current.instructions.trim();
      if (enabled && instructions === '') throw new ApiError('gateway_instructions_required');
    }
    const unknown = patch.currencies?.filter((c) => !isKnownCurrency(c)) ?? [];
    if (unknown.length > 0)
      throw new ApiError('invalid_currency', { data: { params: { currencies: unknown } } });
    const values = {
      ...(patch.enabled === undefined ? {} : { enabled: patch.enabled ? 1 : 0 }),
      ...(patch.currencies === undefined ? {} : { currencies: JSON.stringify(patch.currencies) }),
      ...(patch.instructions === undefined ? {} : { instructions: patch.instructions.trim() }),
    };
    if (Object.keys(values).length === 0) return (await this.find(id))!;
    await withTransaction(this.database, async (tx) => {
      const before = toGateway((await this.repo.find(id, tx))!);
      await this.repo.update(id, values, tx);
      const after = toGateway((await this.repo.find(id, tx))!);
      const fields = Object.keys(patch).filter(
        (f) => f === 'enabled' || f === 'currencies' || f === 'instructions',
      );
      const changed = diff(
        before as unknown as Record<string, unknown>,
        after as unknown as Record<string, unknown>,
        fields,
      );
      const changes = Object.fromEntries(Object.entries(changed).map(([f, c]) => [`${id}.${f}`, c]));
      if (actor && Object.keys(changes).length > 0)
        await this.audit.record(
          actor,
          { entity_type: 'payment_gateway', entity_id: 0, action: 'update', changes },
          tx,
        );
    });
    return (await this.find(id))!;
  }

  /**
   * Going live (docs/payments.md, 'Test mode and live mode'), inside the settings' transaction
   * (src/wiring.ts): a gateway that takes real payments must be enabled, and the test card is
   * switched off, recorded as the administrator's change like any other.
   */
  async goLive(tx: Tx, actor?: Actor): Promise<void> {
    const rows = await this.repo.list(tx);
    if (!rows.some((r) => r.enabled === 1 && r.id !== TEST_GATEWAY))
      throw new ApiError('live_gateway_required');
    const test = rows.find((r) => r.id === TEST_GATEWAY);
    if (test?.enabled !== 1) return;
    await this.repo.update(TEST_GATEWAY, { enabled: 0 }, tx);
    if (actor)
      await this.audit.record(
        actor,
        {
          entity_type: 'payment_gateway',
          entity_id: 0,
          action: 'update',
          changes: { [`${TEST_GATEWAY}.enabled`]: { before: true, after: false } },
        },
        tx,
      );
  }
}

function toGateway(row: GatewayRow): Gateway {
  return {
    id: row.id,
    title: row.title,
    enabled: row.enabled === 1,
    currencies: JSON.parse(row.currencies) as string[],
    instructions: row.instructions,
  };
}
