import { ApiError } from '../../http/errors.js';
import type { SettingsService } from '../settings/settings.service.js';
import { requireCountry } from './countries.js';
import { canonicalDecimal, currencyDecimals } from './money.js';
import type { RuleRow, RulesRepository } from './rules.repository.js';
import type { ShippingZoneBody } from './shipping.schemas.js';

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
  constructor(
    private readonly repo: RulesRepository<'shipping_zones'>,
    private readonly settings: SettingsService,
  ) {}

  /** Every zone in creation order: what checkout matches a destination against. */
  async list(): Promise<ShippingZone[]> {
    return (await this.repo.list()).map(toZone);
  }

  async create(input: ShippingZoneBody): Promise<ShippingZone> {
    const s = await this.settings.get();
    const decimals = currencyDecimals(s.base_currency, s);
    const amount = (value: string | undefined, field: string) => {
      if (value === undefined) return null;
      const canonical = canonicalDecimal(value, decimals);
      if (canonical === null) throw new ApiError('invalid_amount', { data: { params: { [field]: value } } });
      return canonical;
    };
    const regions = input.regions.map((r, i) => {
      requireCountry(r.country, `regions.${i}.country`);
      return { country: r.country, state: r.state ?? '' };
    });
    const methods = input.methods.map((m, i) => ({
      instance_id: i + 1,
      method_id: m.method_id,
      title: m.title,
      cost: amount(m.cost, `methods.${i}.cost`),
      min_amount: amount(m.min_amount, `methods.${i}.min_amount`),
    }));
    const row = await this.repo.insert({
      name: input.name,
      regions: JSON.stringify(regions),
      methods: JSON.stringify(methods),
    });
    return toZone(row);
  }

  async delete(id: number): Promise<void> {
    if (!(await this.repo.delete(id))) throw new ApiError('shipping_zone_not_found');
  }
}

function toZone(row: RuleRow<'shipping_zones'>): ShippingZone {
  return {
    id: row.id,
    name: row.name,
    regions: JSON.parse(row.regions) as ShippingZone['regions'],
    methods: JSON.parse(row.methods) as ShippingMethod[],
  };
}
