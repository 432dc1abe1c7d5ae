import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { TaxReport, TaxReportQuery } from './report.schemas.js';
import { reportCsv, type TaxReportService } from './report.service.js';

/** The tax report, read by administrators (docs/taxes.md, 'The tax report'). */
export async function taxRoutes(app: App, opts: { report: TaxReportService }) {
  app.get(
    '/reports/tax',
    {
      preValidation: requireAdmin,
      config: {
        validationCodes: {
          invalid: { quarter: 'invalid_tax_quarter', format: 'invalid_parameters' },
          unknown: 'invalid_parameters',
        },
      },
      schema: {
        tags: ['reports'],
        summary:
          "Tax collected in a quarter per buyer's country, rate and currency (the OSS return's shape), refunds subtracted, reverse-charge sales apart; format=csv for a spreadsheet",
        querystring: TaxReportQuery,
        response: { 200: TaxReport, ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const report = await opts.report.report(request.query.quarter);
      if (request.query.format !== 'csv') return report;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="tax-${report.quarter}.csv"`)
        .send(reportCsv(report) as never); // text, sent as is: the 200 schema describes the JSON form
    },
  );
}
