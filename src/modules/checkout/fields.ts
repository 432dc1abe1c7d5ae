/** The checkout form fields (the `fields` of `POST /checkout/fields`, docs/checkout.md). */
export interface CheckoutField {
  key: string;
  fieldset: 'billing' | 'shipping' | 'order';
  type: string;
  label: string;
  placeholder: string;
  required: boolean;
  hidden: boolean;
  class: string[];
  priority: number;
  custom: boolean;
}

const field = (
  fieldset: CheckoutField['fieldset'],
  name: string,
  type: string,
  label: string,
  required: boolean,
  priority: number,
  wide = true,
): CheckoutField => ({
  key: fieldset === 'order' ? name : `${fieldset}_${name}`,
  fieldset,
  type,
  label,
  placeholder: '',
  required,
  hidden: false,
  class: [wide ? 'form-row-wide' : priority % 20 === 10 ? 'form-row-first' : 'form-row-last'],
  priority,
  custom: false,
});

const ADDRESS = (fieldset: 'billing' | 'shipping') => [
  field(fieldset, 'country', 'country', 'Country / Region', true, 40),
  field(fieldset, 'address_1', 'text', 'Street address', true, 50),
  field(fieldset, 'address_2', 'text', 'Apartment, suite, unit, etc.', false, 60),
  field(fieldset, 'city', 'text', 'Town / City', true, 70),
  field(fieldset, 'state', 'state', 'State / County', false, 80),
  field(fieldset, 'postcode', 'text', 'Postcode / ZIP', true, 90),
];

/**
 * The fields a checkout form shows. A digital-only order has no shipping address fields, and
 * its billing address asks only for the country (taxes need it); names and email always.
 */
export function checkoutFields(isDigitalOnly: boolean): CheckoutField[] {
  const names = (fs: 'billing' | 'shipping') => [
    field(fs, 'first_name', 'text', 'First name', true, 10, false),
    field(fs, 'last_name', 'text', 'Last name', true, 20, false),
    field(fs, 'company', 'text', 'Company name', false, 30),
  ];
  const billingAddress = ADDRESS('billing').filter((f) => !isDigitalOnly || f.key === 'billing_country');
  const billing = [
    ...names('billing'),
    ...billingAddress,
    field('billing', 'phone', 'tel', 'Phone', false, 100),
    field('billing', 'email', 'email', 'Email address', true, 110),
  ];
  const shipping = isDigitalOnly ? [] : [...names('shipping'), ...ADDRESS('shipping')];
  const order = [field('order', 'order_comments', 'textarea', 'Order notes', false, 10)];
  return [...billing, ...shipping, ...order];
}
