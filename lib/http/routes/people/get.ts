/** `GET /v1/people/{email}`: one person of the tenant (scope `admin`, issue 29 item 4). */
import { getPerson } from '../../../service/sign-in/people.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { PersonAnswer, PersonPath } from './schemas.js';

export const getPersonRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/people/{email}',
    operationId: 'getPerson',
    tags: ['sign-in'],
    summary: 'A person of the tenant',
    description: 'The identity `email` (any case): its own role, linked person ids, name and last sign-in.',
    request: { params: PersonPath },
    responses: { 200: json('the person', PersonAnswer) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['invalid_id', ...AUTHED, 'not_found'],
  handler: async (c) => c.json(await getPerson(c.get('ctx'), c.req.valid('param').email), 200),
});
