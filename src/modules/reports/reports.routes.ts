import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { InstalledBaseParams, InstalledBaseQuery, InstalledBaseReport } from './installed-base.schemas.js';
import type { InstalledBaseService } from './installed-base.service.js';
import { Dashboard, DashboardQuery } from './reports.schemas.js';
import type { ReportsService } from './reports.service.js';

/** The dashboard's report, read by administrators (docs/api.md, 'Reports'). */
export async function reportsRoutes(
  app: App,
  opts: { reports: ReportsService; installedBaseReport: InstalledBaseService },
) {
  app.get(
    '/reports/dashboard',
    {
      preValidation: requireAdmin,
      config: {
        validationCodes: { invalid: { days: 'invalid_report_days' }, unknown: 'invalid_parameters' },
      },
      schema: {
        tags: ['reports'],
        summary:
          'Sales per currency, new licenses, activations, update checks and downloads per UTC day; failing webhooks and drafts',
        querystring: DashboardQuery,
        response: { 200: Dashboard, ...errors(400, 401, 403) },
      },
    },
    (request) => opts.reports.dashboard(request.query.days),
  );

  app.get(
    '/software/products/:product_id/field',
    {
      preValidation: requireAdmin,
      config: {
        validationCodes: {
          invalid: { from: 'invalid_field_range', to: 'invalid_field_range', days: 'invalid_field_range' },
          unknown: 'invalid_parameters',
        },
      },
      schema: {
        tags: ['reports'],
        summary:
          'What runs in the field: sites per version and UTC day, and their platform and PHP versions (docs/distribution.md)',
        params: InstalledBaseParams,
        querystring: InstalledBaseQuery,
        response: { 200: InstalledBaseReport, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => opts.installedBaseReport.report(request.params.product_id, request.query),
  );
}
