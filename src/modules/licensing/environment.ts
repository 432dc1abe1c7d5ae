import type { ActivationEnvironment } from './licensing.tables.js';

/**
 * Which activations are staging ones (docs/licensing.md, '2.3 Staging and development sites'): a
 * normalised domain whose host matches one of `staging_patterns`. The patterns are compiled into
 * three sets once per list, and a domain is matched with one set lookup per dot in it, so an
 * activation pays no more for a hundred patterns than for one.
 */
export type StagingMatcher = (domainNormalized: string) => boolean;

/** Compiles a list of patterns as the settings store them (valid, lower-case). */
export function compileStagingPatterns(patterns: readonly string[]): StagingMatcher {
  const exact = new Set<string>();
  const suffixes = new Set<string>();
  const prefixes = new Set<string>();
  for (const pattern of patterns) {
    if (pattern.startsWith('*.')) suffixes.add(pattern.slice(2));
    else if (pattern.endsWith('.*')) prefixes.add(pattern.slice(0, -2));
    else exact.add(pattern);
  }
  if (exact.size + suffixes.size + prefixes.size === 0) return () => false;
  return (domainNormalized) => {
    // An IPv6 literal never matches (no pattern can name one); a port does not take part.
    if (domainNormalized.startsWith('[')) return false;
    const colon = domainNormalized.indexOf(':');
    const host = colon === -1 ? domainNormalized : domainNormalized.slice(0, colon);
    if (exact.has(host)) return true;
    // `*.suffix`: a proper subdomain of the suffix, at any depth.
    if (suffixes.size > 0) {
      for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
        if (suffixes.has(host.slice(dot + 1))) return true;
      }
    }
    // `prefix.*`: the prefix's labels, then a name of at least two labels (`staging.example.com`,
    // not `dev.to`, whose rest is a top-level domain).
    if (prefixes.size > 0) {
      for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
        if (host.indexOf('.', dot + 1) === -1) break;
        if (prefixes.has(host.slice(0, dot))) return true;
      }
    }
    return false;
  };
}

/**
 * The compiled matcher of the current settings. The settings service hands out a new array when
 * its cache is refilled (once a second at most), so the list is compiled again only when its
 * content changed.
 */
export class StagingPatterns {
  private lastList: readonly string[] | null = null;
  private lastKey = '';
  private matcher: StagingMatcher = () => false;

  matcherFor(patterns: readonly string[]): StagingMatcher {
    if (patterns === this.lastList) return this.matcher;
    const key = patterns.join('\n');
    if (key !== this.lastKey || this.lastList === null) {
      this.matcher = compileStagingPatterns(patterns);
      this.lastKey = key;
    }
    this.lastList = patterns;
    return this.matcher;
  }

  /**
   * Where an activation on this domain runs. A staging limit of 0 switches staging off: every site
   * is a production one, as before staging existed.
   */
  environmentOf(
    domainNormalized: string,
    settings: { staging_patterns: readonly string[]; staging_activation_limit: number },
  ): ActivationEnvironment {
    if (settings.staging_activation_limit === 0) return 'production';
    return this.matcherFor(settings.staging_patterns)(domainNormalized) ? 'staging' : 'production';
  }
}
