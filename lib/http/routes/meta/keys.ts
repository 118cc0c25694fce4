/** `GET /v1/keys`: the public keys that verify this deployment's signed digests (issue 15.2), without auth. */
import { KeysAnswer } from '../../../audit/schemas.js';
import { listPublicKeys } from '../../../service/digests/keys.js';
import { defineRoute, json } from '../../route.js';

const KeysDoc = KeysAnswer.meta({
  id: 'KeysAnswer',
  description:
    'every Ed25519 key this deployment signed digests with, oldest first; a retired key (retired_at set) signs no more but still verifies what it signed',
});

export const keysRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/keys',
    operationId: 'listKeys',
    tags: ['meta'],
    summary: 'Public keys of the signed digests',
    description:
      "The keys `hansard verify --digests` checks a bundle with (`key_id` is `k_` + 24 hex digits of the SHA-256 of the key's SPKI DER). Public: no token needed. Pin a key you fetched over a channel you trust; a key taken from a bundle proves only that the bundle is self-consistent.",
    responses: { 200: json('the public keys', KeysDoc) },
  },
  auth: 'none',
  errors: ['digests_unavailable', 'signing_unavailable'],
  handler: async (c) => {
    const answer = await listPublicKeys(c.get('services').deps.signer);
    // Public and the same for everyone: shared caches may keep it a minute (a rotation shows within it).
    c.header('cache-control', 'public, max-age=60');
    c.header('access-control-allow-origin', '*');
    return c.json(answer, 200);
  },
});
