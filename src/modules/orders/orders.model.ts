import type { Insertable, Selectable } from 'kysely';
import type { OrdersTables } from './orders.tables.js';

/** An order and its items as stored; other modules use these types, never the repository. */
export type OrderRow = Selectable<OrdersTables['orders']>;
export type OrderItemRow = Selectable<OrdersTables['order_items']>;
export type NewOrder = Insertable<OrdersTables['orders']>;
export type NewOrderItem = Insertable<OrdersTables['order_items']>;

/** What an order holds back from stock: a variation's own stock or its product's. */
export interface StockHold {
  pool: 'product' | 'variation';
  id: number;
  quantity: number;
}
