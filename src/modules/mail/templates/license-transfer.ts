import { day, type TransferFacts } from './facts.js';
import { button, html, p, page, type Template, textFooter } from './layout.js';

/**
 * Sent to the receiver of a license transfer (docs/selling.md, 'Transfers'); `ctx.link` opens the
 * accept page, once, within 7 days.
 */
export const licenseTransfer: Template<TransferFacts> = (f, ctx) => {
  const subject = `A ${f.product} license is offered to you at ${ctx.store_name}`;
  const who = f.from_email ? `${f.from_email} offers` : `${ctx.store_name} offers`;
  const line = `${who} you their ${f.product} license. Accept it to have it in your account at ${ctx.store_name}, under this email address:`;
  const sites = f.keep_activations
    ? 'The sites it is activated on stay activated.'
    : 'Its sites will be deactivated: activate your own with the license key.';
  const until = `The link works once, until ${day(f.expires_at)}. If you do not want the license, ignore this email.`;
  const text = `Hello,

${line}

${ctx.link}

${sites}
${until}
${textFooter(ctx)}`;
  const body = html`${p('Hello,')}${p(line)}${button(ctx, ctx.link, 'See the transfer')}${p(sites)}${p(until)}`;
  return { subject, text, html: page(ctx, 'License transfer', body) };
};
