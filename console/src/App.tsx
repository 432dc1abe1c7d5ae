import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import { Link, Route, Router, Switch, useLocation } from 'wouter';
import { api, ok } from './api';
import { AppPasswords } from './screens/AppPasswords';
import { Audit } from './screens/Audit';
import { CouponPage, Coupons } from './screens/Coupons';
import { CustomerPage, Customers } from './screens/Customers';
import { Gateways } from './screens/Gateways';
import { Import } from './screens/Import';
import { LicensePage } from './screens/License';
import { Licenses } from './screens/Licenses';
import { Mail } from './screens/Mail';
import { NewLicense } from './screens/NewLicense';
import { OrderPage } from './screens/Order';
import { Orders } from './screens/Orders';
import { ProductPage } from './screens/Product';
import { Products } from './screens/Products';
import { Releases } from './screens/Releases';
import { SettingsPage } from './screens/Settings';
import { ShippingZones } from './screens/ShippingZones';
import { SignIn } from './screens/SignIn';
import { Storage } from './screens/Storage';
import { SubscriptionPage } from './screens/Subscription';
import { Subscriptions } from './screens/Subscriptions';
import { TaxRates } from './screens/TaxRates';
import { TaxReportPage } from './screens/TaxReport';
import { Webhooks } from './screens/Webhooks';
import { useSession } from './session';
import { ErrorNote, Loading, Page } from './ui/feedback';

// The dashboard brings uPlot: loaded on its own, so the first load stays small (docs/admin.md).
const Dashboard = lazy(() => import('./screens/Dashboard').then((m) => ({ default: m.Dashboard })));

const NAV = [
  { href: '/', label: 'Dashboard' },
  { href: '/licenses', label: 'Licenses' },
  { href: '/products', label: 'Products' },
  { href: '/orders', label: 'Orders' },
  { href: '/customers', label: 'Customers' },
  { href: '/subscriptions', label: 'Subscriptions' },
  { href: '/coupons', label: 'Coupons' },
  { href: '/tax-rates', label: 'Tax rates' },
  { href: '/tax-report', label: 'Tax report' },
  { href: '/shipping-zones', label: 'Shipping' },
  { href: '/payment-gateways', label: 'Gateways' },
  { href: '/webhooks', label: 'Webhooks' },
  { href: '/mail', label: 'Mail' },
  { href: '/import', label: 'Import' },
  { href: '/storage', label: 'Storage' },
  { href: '/settings', label: 'Settings' },
  { href: '/audit', label: 'Audit' },
  { href: '/app-passwords', label: 'App passwords' },
];
// Two groups, one row each at 1280 px (one list of eighteen wrapped to three rows): the day's work
// first, then what sets the store up and what it keeps on record.
const SETUP = NAV.findIndex((item) => item.href === '/tax-rates');
const NAV_GROUPS = [
  { label: 'Sales', items: NAV.slice(0, SETUP) },
  { label: 'Store setup', items: NAV.slice(SETUP) },
];

export function App() {
  const { state, retry } = useSession();
  if (state.status === 'loading') {
    return (
      <main id="main" className="sign-in">
        <Loading what="the console" />
      </main>
    );
  }
  if (state.status === 'failed') {
    return (
      <main id="main" className="sign-in">
        <div className="card">
          <h1>Tollgate console</h1>
          <ErrorNote error={state.error} />
          <button type="button" className="primary" onClick={retry}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (state.status === 'signed-out') return <SignIn />;
  return (
    <Router base="/admin">
      <Shell email={state.user.email} />
    </Router>
  );
}

function Shell({ email }: { email: string }) {
  const { signOut } = useSession();
  const [location] = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<unknown>(null);

  // A narrow screen's menu closes once a screen is chosen.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every change of location, by design
  useEffect(() => setMenuOpen(false), [location]);
  // The store's mode, shared with the screens that change it (Dashboard, Gateways, Settings).
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/v1/settings')) });

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          Tollgate
        </Link>
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : undefined}>
          {NAV_GROUPS.map((group) => (
            <ul key={group.label} aria-label={group.label}>
              {group.items.map((item) => {
                const current =
                  location === item.href || (item.href !== '/' && location.startsWith(`${item.href}/`));
                return (
                  <li key={item.href}>
                    <Link href={item.href} aria-current={current ? 'page' : undefined}>
                      {item.label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          ))}
          <div className="who">
            <a href="/" className="view-store">
              View store
            </a>
            <span className="email">{email}</span>
            <button type="button" className="link" onClick={() => signOut().catch((e) => setSignOutError(e))}>
              Sign out
            </button>
          </div>
        </nav>
      </header>
      {settings.data?.store_mode === 'test' ? (
        // Plain text, not a live region: role="status" is kept for the screens' notices.
        <p className="test-mode-banner">
          <strong>Test mode: no real payments.</strong> Orders and licenses made now are test data.{' '}
          <Link href="/#go-live" className="test-mode-link">
            Go live
          </Link>
        </p>
      ) : null}
      <main id="main" tabIndex={-1}>
        <ErrorNote error={signOutError} title="Sign-out failed" />
        <Switch>
          <Route path="/">
            <Suspense fallback={<Loading what="the dashboard" />}>
              <Dashboard />
            </Suspense>
          </Route>
          <Route path="/licenses" component={Licenses} />
          <Route path="/licenses/new" component={NewLicense} />
          <Route path="/licenses/:id">{(p) => <LicensePage id={Number(p.id)} />}</Route>
          <Route path="/products" component={Products} />
          <Route path="/products/new">{() => <ProductPage id={null} />}</Route>
          <Route path="/products/:id">{(p) => <ProductPage id={Number(p.id)} />}</Route>
          <Route path="/products/:id/releases">{(p) => <Releases productId={Number(p.id)} />}</Route>
          <Route path="/orders" component={Orders} />
          <Route path="/orders/:id">{(p) => <OrderPage id={Number(p.id)} />}</Route>
          <Route path="/customers" component={Customers} />
          <Route path="/customers/:id">{(p) => <CustomerPage id={Number(p.id)} />}</Route>
          <Route path="/subscriptions" component={Subscriptions} />
          <Route path="/subscriptions/:id">{(p) => <SubscriptionPage id={Number(p.id)} />}</Route>
          <Route path="/coupons" component={Coupons} />
          <Route path="/coupons/new">{() => <CouponPage id={null} />}</Route>
          <Route path="/coupons/:id">{(p) => <CouponPage id={Number(p.id)} />}</Route>
          <Route path="/tax-rates" component={TaxRates} />
          <Route path="/tax-report" component={TaxReportPage} />
          <Route path="/shipping-zones" component={ShippingZones} />
          <Route path="/payment-gateways" component={Gateways} />
          <Route path="/webhooks" component={Webhooks} />
          <Route path="/mail" component={Mail} />
          <Route path="/import" component={Import} />
          <Route path="/storage" component={Storage} />
          <Route path="/settings" component={SettingsPage} />
          <Route path="/audit" component={Audit} />
          <Route path="/app-passwords" component={AppPasswords} />
          <Route>
            <Page title="Page not found">
              <p>
                There is no such screen. <Link href="/licenses">Go to the licenses</Link>.
              </p>
            </Page>
          </Route>
        </Switch>
      </main>
    </>
  );
}
