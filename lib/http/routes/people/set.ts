/**
 * `PUT /v1/people/{email}`: links person ids to a sign-in identity, unlinks them, or sets its own role
 * (scope `admin`, issue 29 items 2 and 4).
 */
import { setPerson } from '../../../service/sign-in/people.js';
import { jsonBody } from '../../params.js';
import { AUTHED, defineRoute, JSON_BODY, json, WRITE_FAULTS } from '../../route.js';
import { PersonAnswer, PersonBody, PersonPath } from './schemas.js';

export const setPersonRoute = defineRoute({
  route: {
    method: 'put',
    path: '/v1/people/{email}',
    operationId: 'setPerson',
    tags: ['sign-in'],
    summary: 'Link, unlink or set the role of a person',
    description: [
      '`link` adds person ids (the record’s `user_id`s, the board’s /people/{id}) to the identity, at most',
      '20; `unlink` removes them; `role` sets its own role (`viewer`, `member`, `admin`, `none`: refused',
      'whatever its groups say; null: back to the role map). A person not yet known is made by a `link` or a',
      'role, so an admin can set them up before their first sign-in. The change applies at the person’s next',
      'request. Recorded in the audit list (`person.set`).',
    ].join(' '),
    request: { params: PersonPath },
    responses: { 200: json('the person after the change', PersonAnswer) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  body: { contentType: 'application/json', schema: PersonBody },
  errors: [...JSON_BODY, 'invalid_id', ...AUTHED, 'not_found', 'conflict', ...WRITE_FAULTS],
  handler: async (c) => {
    const { email } = c.req.valid('param');
    return c.json(await setPerson(c.get('ctx'), email, await jsonBody(c)), 200);
  },
});
