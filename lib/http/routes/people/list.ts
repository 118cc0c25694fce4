/** `GET /v1/people?limit=&cursor=`: the tenant's people, a page at a time (scope `admin`, issue 29 item 4). */
import { z } from 'zod';
import { listPeople } from '../../../service/sign-in/people.js';
import { Cursor } from '../../params.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { PeopleLimit, PeopleList } from './schemas.js';

export const listPeopleRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/people',
    operationId: 'listPeople',
    tags: ['sign-in'],
    summary: "The tenant's people",
    description: [
      'Each sign-in identity by email: its own role (`none`: refused; null: the role map decides), the',
      'person ids linked to it, its name and last sign-in. `next` is a signed cursor for this tenant.',
    ].join(' '),
    request: { query: z.object({ limit: PeopleLimit, cursor: Cursor }) },
    responses: { 200: json('a page of people', PeopleList) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['bad_request', 'invalid_cursor', ...AUTHED],
  handler: async (c) => {
    const { limit, cursor } = c.req.valid('query');
    return c.json(await listPeople(c.get('ctx'), { limit, cursor }), 200);
  },
});
