import { Type } from 'typebox';
import { Email, errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { TrialService } from './trial.service.js';

const TrialBody = Type.Object(
  {
    product_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    email: Email,
    site: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'The site the trial is for' }),
    ),
  },
  { additionalProperties: false },
);

const TrialResponse = Type.Object({
  license_key: Type.String(),
  product_id: Type.Integer(),
  usage_expires_at: Type.String({ description: 'When the trial ends (effective status `trial_ended`)' }),
  activation_limit: Type.Integer(),
});

/** Starting a trial (docs/selling.md, 'Trials'): no credentials; once per email and per site. */
export async function trialRoutes(app: App, opts: { trials: TrialService }) {
  app.post(
    '/trials',
    {
      schema: {
        tags: ['licensing'],
        summary: "Start a product's trial for an email (and optionally a site): a trial license, once each",
        body: TrialBody,
        response: { 201: TrialResponse, ...errors(400, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await opts.trials.start(request.body)),
  );
}
