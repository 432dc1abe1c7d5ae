import { useEffect } from 'react';

/**
 * Once `ready` (the screen's data is there), moves to the element the address's #fragment names
 * and focuses it: the dashboard's checklist links to one field (`/settings#setting-smtp_url`), not
 * to the top of a long page.
 */
export function useHashFocus(ready: boolean): void {
  useEffect(() => {
    if (!ready) return;
    // After the screen's own effects, which give its title the focus (ui/feedback.tsx, Page).
    const timer = setTimeout(() => {
      const id = decodeURIComponent(window.location.hash.slice(1));
      const target = id ? document.getElementById(id) : null;
      if (!target) return;
      target.scrollIntoView({ block: 'center' });
      if (!target.matches('input, select, textarea, button, a[href]')) target.setAttribute('tabindex', '-1');
      target.focus({ preventScroll: true });
    }, 0);
    return () => clearTimeout(timer);
  }, [ready]);
}
