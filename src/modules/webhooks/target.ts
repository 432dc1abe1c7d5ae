import type { AddressInfo } from 'node:net';
import { type Clock, iso } from '../../clock.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Rotation, WebhooksRepository } from './webhooks.repository.js';

/** Where and how deliveries go. An empty `url` turns delivery off. */
export interface WebhookTarget {
  url: string;
  secret: string;
  /** A former secret that still signs `webhook-signature` until `previous_secret_until`. */
  previous_secret?: string | null;
  previous_secret_until?: Date | string | null;
}

/**
 * The one extension point (docs/webhooks.md, 'The extension function'): receives the target built
 * from the settings and returns the one to use.
 * Pass it as `buildApp(config, db, { webhookTarget })`.
 */
export type WebhookTargetFilter = (
  target: WebhookTarget,
  settings: Settings,
) => WebhookTarget | Promise<WebhookTarget>;

/** How long the former secret keeps signing after `webhook_secret` changes. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;

/**
 * Resolves the target for a batch of deliveries: settings, the remembered previous secret, then the
 * filter. A change of `webhook_secret` is noticed here and starts the overlap, so rotation needs no
 * extra setting: the new secret signs everything, the old one also signs `webhook-signature` for a day.
 */
export class TargetResolver {
  private remembered: Rotation | null = null;

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly filter?: WebhookTargetFilter,
  ) {}

  async resolve(): Promise<{ url: string; secret: string; previousSecret: string | null }> {
    const settings = await this.settings.get();
    const rotation = await this.rotation(settings.webhook_secret);
    const now = this.clock.now();
    let target: WebhookTarget = {
      url: settings.webhook_url,
      secret: settings.webhook_secret,
      previous_secret: rotation.previous,
      previous_secret_until: rotation.previous_until,
    };
    if (this.filter) target = await this.filter(target, settings);
    const until = target.previous_secret_until ? new Date(target.previous_secret_until) : null;
    const overlapping = target.previous_secret && (until === null || until.getTime() > now.getTime());
    return {
      url: target.url ?? '',
      secret: target.secret ?? '',
      previousSecret: overlapping ? (target.previous_secret ?? null) : null,
    };
  }

  private async rotation(secret: string): Promise<Rotation> {
    if (this.remembered?.current !== secret) {
      this.remembered = await this.repository.findRotation();
    }
    let r = this.remembered;
    if (r?.current === secret) return r;
    const now = this.clock.now();
    r = r?.current
      ? {
          current: secret,
          previous: r.current,
          previous_until: iso(new Date(now.getTime() + ROTATION_OVERLAP_SECONDS * 1000)),
        }
      : { current: secret, previous: null, previous_until: null };
    await this.repository.saveRotation(r);
    this.remembered = r;
    return r;
  }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]']);

/**
 * Why a delivery to `url` must not be made, or null. Refused: anything but http(s), and this
 * service itself (its PUBLIC_URL origin, or a loopback address on the port it listens on).
 */
export function refuseTarget(url: string, self: { origin: string; port: number | null }): string | null {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'invalid target url';
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return 'invalid target url';
  if (target.origin === new URL(self.origin).origin) return 'target is this service';
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const host = target.hostname.toLowerCase();
  if (self.port !== null && port === self.port && (LOOPBACK.has(host) || host.startsWith('127.')))
    return 'target is this service';
  return null;
}

/** The port the HTTP server listens on, once it does. */
export function listeningPort(server: { address(): AddressInfo | string | null }): number | null {
  const address = server.address();
  return address && typeof address === 'object' ? address.port : null;
}
