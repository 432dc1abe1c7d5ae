import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService, ChangeRecorder } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { requireCountry } from './countries.js';
import { canonicalDecimal, currencyDecimals } from './money.js';
import type { RuleRow, RulesRepository } from './rules.repository.js';
import type { ShippingZoneBody, ShippingZonePatchBody } from './shipping.schemas.js';

export type ShippingMethodId = 'flat_rate' | 'free_shipping' | 'local_pickup';

export interface ShippingMethod {
  /** 1-based position in the zone; `method_id:instance_id` names a rate at checkout. */
  instance_id: number;
  method_id: ShippingMethodId;
  title: string;
  /** Base-currency decimal string; null = free. */
  cost: string | null;
  /** For free_shipping: the order subtotal from which it applies; null = always. */
  min_amount: string | null;
}

export interface ShippingZone {
  id: number;
  name: string;
  /** state "" = the whole country. */
  regions: { country: string; state: string }[];
  methods: ShippingMethod[];
}

export class ShippingService {
  /** Records an administrator's change in its transaction (docs/admin.md, 'Audit trail'). */
  private readonly recordIn: ChangeRecorder;

  constructor(
    private readonly repo: RulesRepository<'shipping_zones'>,
    private readonly settings: SettingsService,
    private readonly database: Pick<Database, 'db'>,
    audit: AuditService,
  ) {
    this.recordIn = audit.recorderOf('shipping_zone');
  }

  /** Every zone in creation order: what checkout matches a destination against. */
  async list(): Promise<ShippingZone[]> {
    return (await this.repo.list()).map(toZone);
  }

  async create(input: ShippingZoneBody, actor?: Actor): Promise<ShippingZone> {
    const amount = await this.amounts();
    const values = {
      name: input.name,
      regions: JSON.stringify(regionsOf(input.regions)),
      methods: JSON.stringify(methodsOf(input.methods, amount)),
    };
    return withTransaction(this.database, async (tx) => {
      const zone = toZone(await this.repo.insert(values, tx));
      await this.recordIn(actor, zone.id, 'create', diff({}, asRecord(zone), ZONE_FIELDS), tx);
      return zone;
    });
  }

  /**
   * A patch names any of `name`, `regions` and `methods`; a list given replaces the stored one
   * whole and is checked as on create (methods are numbered again from 1).
   */
  async update(id: number, patch: ShippingZonePatchBody, actor?: Actor): Promise<ShippingZone> {
    const amount = await this.amounts();
    const values: { name?: string; regions?: string; methods?: string } = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.regions !== undefined) values.regions = JSON.stringify(regionsOf(patch.regions));
    if (patch.methods !== undefined) values.methods = JSON.stringify(methodsOf(patch.methods, amount));
    return withTransaction(this.database, async (tx) => {
      const row = await this.repo.find(id, tx);
      if (!row) throw new ApiError('shipping_zone_not_found');
      const updated = Object.keys(values).length > 0 ? await this.repo.update(id, values, tx) : row;
      if (!updated) throw new ApiError('shipping_zone_not_found');
      const before = toZone(row);
      const after = toZone(updated);
      await this.recordIn(actor, id, 'update', diff(asRecord(before), asRecord(after), ZONE_FIELDS), tx);
      return after;
    });
  }

  /** Canonical amounts in the base currency's decimals; a malformed one is `invalid_amount` on its field. */
  private async amounts() {
    const s = await this.settings.get();
    const decimals = currencyDecimals(s.base_currency, s);
    return (value: string | undefined, field: string) => {
      if (value === undefined) return null;
      const canonical = canonicalDecimal(value, decimals);
      if (canonical === null) throw new ApiError('invalid_amount', { data: { params: { [field]: value } } });
      return canonical;
    };
  }

  async delete(id: number, actor?: Actor): Promise<void> {
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.find(id, tx);
      if (!row || !(await this.repo.delete(id, tx))) throw new ApiError('shipping_zone_not_found');
      await this.recordIn(actor, id, 'delete', { name: { before: row.name, after: null } }, tx);
    });
  }
}

/** The fields an administrator sets (the audit trail's before and after). */
const ZONE_FIELDS = ['name', 'regions', 'methods'];
const asRecord = (zone: ShippingZone) => zone as unknown as Record<string, unknown>;

function regionsOf(regions: ShippingZoneBody['regions']): ShippingZone['regions'] {
  return regions.map((r, i) => {
    requireCountry(r.country, `regions.${i}.country`);
    return { country: r.country, state: r.state ?? '' };
  });
}

function methodsOf(
  methods: ShippingZoneBody['methods'],
  amount: (value: string | undefined, field: string) => string | null,
): ShippingMethod[] {
  return methods.map((m, i) => ({
    instance_id: i + 1,
    method_id: m.method_id,
    title: m.title,
    cost: amount(m.cost, `methods.${i}.cost`),
    min_amount: amount(m.min_amount, `methods.${i}.min_amount`),
  }));
}

function toZone(row: RuleRow<'shipping_zones'>): ShippingZone {
  return {
    id: row.id,
    name: row.name,
    regions: JSON.parse(row.regions) as ShippingZone['regions'],
    methods: JSON.parse(row.methods) as ShippingMethod[],
  };
}
