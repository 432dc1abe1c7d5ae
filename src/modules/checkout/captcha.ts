import type { Settings } from '../settings/settings.schemas.js';
import { SettingsService } from '../settings/settings.service.js';

const TIMEOUT_MS = 5000;

/**
 * Verifies a CAPTCHA token with the provider's siteverify endpoint (or `captcha_verify_url`).
 * Turnstile takes JSON `{secret, response, remoteip}`; reCAPTCHA takes the same fields
 * form-encoded. Both answer `{success: boolean}`. Any failure to ask (timeout, network, a non-JSON
 * answer) counts as a failed check: checkout fails closed.
 */
export async function verifyCaptcha(settings: Settings, token: string, ip: string): Promise<boolean> {
  const url = SettingsService.captchaVerifyUrl(settings);
  if (!url) return false;
  const fields = { secret: settings.captcha_secret, response: token, remoteip: ip };
  const init: RequestInit =
    settings.captcha_provider === 'turnstile'
      ? { body: JSON.stringify(fields), headers: { 'content-type': 'application/json' } }
      : {
          body: new URLSearchParams(fields).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        };
  try {
    const res = await fetch(url, { method: 'POST', ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!res.ok) return false;
    const body = (await res.json()) as { success?: unknown };
    return body.success === true;
  } catch {
    return false;
  }
}
