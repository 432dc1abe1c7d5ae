import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { Settings, SettingsPatch } from './settings.schemas.js';
import type { SettingsService } from './settings.service.js';

export async function settingsRoutes(app: App, opts: { settings: SettingsService }) {
  app.get(
    '/settings',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['settings'],
        summary: 'Store settings',
        response: { 200: Settings, ...errors(401, 403) },
      },
    },
    () => opts.settings.view(),
  );

  app.patch(
    '/settings',
    {
      preValidation: requireAdmin,
      config: { validationCodes: { unknown: 'invalid_parameters' } },
      schema: {
        tags: ['settings'],
        summary: 'Change any subset of the settings; answers the whole object',
        body: SettingsPatch,
        response: { 200: Settings, ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      await opts.settings.update(request.body, actorOf(request));
      return opts.settings.view();
    },
  );
}
