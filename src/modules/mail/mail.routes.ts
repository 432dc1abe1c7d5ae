import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { paginate } from '../catalogue/pagination.js';
import {
  MailIdParams,
  MailMessage,
  MailQuery,
  ResendBody,
  TestMailBody,
  TestMailSent,
} from './mail.schemas.js';
import type { MailService } from './mail.service.js';
import type { MailTestService } from './mail-test.service.js';

/** The mail outbox, for administrators (docs/email.md, 'The outbox'; docs/api.md, 'Mail'). */
export async function mailRoutes(app: App, opts: { mail: MailService; mailTest: MailTestService }) {
  app.get(
    '/mail/messages',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['mail'],
        summary: 'Messages of the mail outbox, newest first; X-WP-Total and X-WP-TotalPages carry the totals',
        querystring: MailQuery,
        response: { 200: Type.Array(MailMessage), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { page, per_page, ...filter } = request.query;
      return paginate(reply, await opts.mail.list(filter, page, per_page), per_page);
    },
  );

  app.post(
    '/mail/messages/:id/resend',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['mail'],
        summary: 'Send the message again now, with a fresh series of attempts',
        params: MailIdParams,
        body: ResendBody,
        response: { 200: MailMessage, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => opts.mail.resend(request.params.id, actorOf(request)),
  );

  app.post(
    '/mail/test',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['mail'],
        summary:
          "Send a test email now through the store's mail server; 502 mail_test_failed carries the SMTP error (docs/email.md)",
        body: TestMailBody,
        response: { 200: TestMailSent, ...errors(400, 401, 403, 409, 502) },
      },
    },
    (request) => opts.mailTest.send(request.body.to ?? actorOf(request).email),
  );
}
