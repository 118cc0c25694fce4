/**
 * What `/v1/people` (issue 29 item 4) takes and answers, named for the OpenAPI document: the contract's
 * shapes (lib/contract/sign-in.ts) with their component ids, the listing's envelope, the path and query.
 */
import { z } from 'zod';
import { EmailAddress, PersonInput, PersonView } from '../../../contract/sign-in.js';
import { Limit } from '../../params.js';

/** `{email}` of the path (URL-encoded: `priya%40example.com`), any case. */
export const PersonPath = z.object({
  email: EmailAddress.describe('the person’s sign-in email, any case (compared in lower case)'),
});

/** `PUT /v1/people/{email}`'s body, as the verb validates it (`setPerson`). */
export const PersonBody = PersonInput.meta({
  id: 'PersonInput',
  description: 'person ids to link or unlink, and/or the person’s own role',
});

/** A person as answered. */
export const PersonAnswer = PersonView.meta({
  id: 'PersonView',
  description: 'a sign-in identity of the tenant: its own role, its linked person ids, its last sign-in',
});

/** `GET /v1/people`. */
export const PeopleList = z
  .object({ people: z.array(PersonView), next: z.string().nullable() })
  .meta({ id: 'PeopleList', description: "a page of the tenant's people, by email" });

/** `?limit=` of the people listing: 1 to 200, default 50. */
export const PeopleLimit = Limit.describe('how many people to answer, 1 to 200 (default 50)');
