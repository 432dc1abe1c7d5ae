import { ApiError } from '../../http/errors.js';
import type { GatewayRow, GatewaysRepository } from './gateways.repository.js';
import type { GatewayPatchBody } from './gateways.schemas.js';
import { isKnownCurrency } from './money.js';

export interface Gateway {
  id: string;
  title: string;
  enabled: boolean;
  /** Currencies the gateway accepts; empty = all. */
  currencies: string[];
}

export class GatewaysService {
  constructor(private readonly repo: GatewaysRepository) {}

  async list(): Promise<Gateway[]> {
    return (await this.repo.list()).map(toGateway);
  }

  /** For checkout: the gateway, or null when the id names none. */
  async find(id: string): Promise<Gateway | null> {
    const row = await this.repo.find(id);
    return row ? toGateway(row) : null;
  }

  async update(id: string, patch: GatewayPatchBody): Promise<Gateway> {
    if (!(await this.repo.find(id))) throw new ApiError('gateway_not_found');
    const unknown = patch.currencies?.filter((c) => !isKnownCurrency(c)) ?? [];
    if (unknown.length > 0)
      throw new ApiError('invalid_currency', { data: { params: { currencies: unknown } } });
    const values = {
      ...(patch.enabled === undefined ? {} : { enabled: patch.enabled ? 1 : 0 }),
      ...(patch.currencies === undefined ? {} : { currencies: JSON.stringify(patch.currencies) }),
    };
    if (Object.keys(values).length > 0) await this.repo.update(id, values);
    return (await this.find(id))!;
  }
}

function toGateway(row: GatewayRow): Gateway {
  return {
    id: row.id,
    title: row.title,
    enabled: row.enabled === 1,
    currencies: JSON.parse(row.currencies) as string[],
  };
}
