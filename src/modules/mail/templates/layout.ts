import { type Html, html } from '../../../pages/html.js';

/** What every message shows of the store (settings store_name and store_accent_color) and where its pages are. */
export interface MailContext {
  store_name: string;
  accent: string;
  /** PUBLIC_URL: every link in a message is absolute. */
  origin: string;
  /** The password link of a password message, minted when it is sent (docs/email.md). */
  link: string;
}

export interface Rendered {
  subject: string;
  text: string;
  html: string;
}

/** A template: one per message, each in its own file; every value is escaped by `html`. */
export type Template<D> = (data: D, ctx: MailContext) => Rendered;

/** An accent colour safe to put in a style attribute (settings enforce #rrggbb; this is the second line). */
const colour = (accent: string) => (/^#[0-9a-fA-F]{6}$/.test(accent) ? accent : '#1d4ed8');

/** White or near-black, whichever reads better on the accent (WCAG relative luminance). */
function textOn(accent: string): string {
  const channel = (i: number) => {
    const c = Number.parseInt(accent.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  // Contrast with white (1.05 / (L + 0.05)) against contrast with #18181b (about (L + 0.05) / 0.06).
  return 1.05 / (luminance + 0.05) >= (luminance + 0.05) / 0.06 ? '#ffffff' : '#18181b';
}

export const greeting = (firstName: string | null | undefined) =>
  firstName ? `Hello ${firstName},` : 'Hello,';

/** The HTML part: a single-column page with inline styles (mail clients drop style sheets). */
export function page(ctx: MailContext, title: string, body: Html): string {
  const accent = colour(ctx.accent);
  const ink = textOn(accent);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title></head>
<body style="margin:0;padding:0;background:#f4f4f5;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#18181b">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f5"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:600px;background:#ffffff;border-radius:8px;overflow:hidden">
<tr><td style="background:${accent};color:${ink};padding:16px 24px;font-size:18px;font-weight:bold">${ctx.store_name}</td></tr>
<tr><td style="padding:24px;font-size:16px;line-height:1.5">
<h1 style="font-size:20px;margin:0 0 16px">${title}</h1>
${body}
</td></tr>
<tr><td style="padding:16px 24px;font-size:12px;color:#52525b;border-top:1px solid #e4e4e7">${ctx.store_name} · <a href="${ctx.origin}/" style="color:#52525b">${ctx.origin}</a></td></tr>
</table></td></tr></table></body></html>`.text;
}

export function button(ctx: MailContext, href: string, label: string): Html {
  const accent = colour(ctx.accent);
  return html`<p style="margin:24px 0"><a href="${href}" style="display:inline-block;background:${accent};color:${textOn(accent)};text-decoration:none;padding:12px 20px;border-radius:6px;font-weight:bold">${label}</a></p>`;
}

export const p = (text: string): Html => html`<p style="margin:0 0 12px">${text}</p>`;

/** The text part's closing lines. */
export const textFooter = (ctx: MailContext) => `\n--\n${ctx.store_name}\n${ctx.origin}/\n`;

/** A message of the common shape: see `notice`. */
export interface Notice {
  subject: string;
  /** The HTML part's heading. */
  title: string;
  first_name: string;
  line: string;
  link: string;
  /** The button's words in the HTML part. */
  button: string;
  /** In the text part the link follows `label: `; without a label it stands alone on its line. */
  label?: string;
  /** A closing paragraph after the link. */
  after?: string;
}

/**
 * The shape most messages share: a greeting, one paragraph, the one link the reader acts on (a
 * button in the HTML part) and an optional closing paragraph, with the same words in both parts.
 */
export function notice(ctx: MailContext, n: Notice): Rendered {
  const link = n.label ? `${n.label}: ${n.link}` : n.link;
  const text = `${greeting(n.first_name)}

${n.line}

${link}
${n.after ? `\n${n.after}\n` : ''}${textFooter(ctx)}`;
  const body = html`${p(greeting(n.first_name))}${p(n.line)}${button(ctx, n.link, n.button)}${n.after ? p(n.after) : ''}`;
  return { subject: n.subject, text, html: page(ctx, n.title, body) };
}

export { html };
