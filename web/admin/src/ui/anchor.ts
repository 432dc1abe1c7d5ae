import { useEffect } from 'react';

/**
 * Once `ready` (the screen's data is there), moves to the element the address's #fragment names
 * and focuses it: the dashboard's checklist links to one field (`/settings#setting-smtp_url`), not
 * to the top of a long page.
 */
export function useHashFocus(ready: boolean): void {
  useEffect(() => {
    if (!ready) return;
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    if (!target) return;
    target.scrollIntoView({ block: 'center' });
    if (!target.matches('input, select, textarea, button, a[href]')) target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
  }, [ready]);
}
