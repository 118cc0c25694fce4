/**
 * `GET /v1/keys` (issue 15.2): the deployment's public keys, current and retired, with which anyone can
 * check a digest's signature offline (`hansard verify --digests`). Public: a key proves nothing secret.
 */
import type { KeysAnswer } from '../../audit/schemas.js';
import type { DigestSigner } from '../../audit/signer.js';
import { AppError } from '../shared/errors.js';

/**
 * Every key the deployment signed with, oldest first.
 * @throws AppError `signing_unavailable` (503) when the signer cannot list them (KMS denied or
 *   unreachable), `digests_unavailable` (503) when the deployment has no signer
 */
export async function listPublicKeys(signer: DigestSigner): Promise<KeysAnswer> {
  try {
    return { keys: await signer.publicKeys() };
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(
      'signing_unavailable',
      `the public keys could not be read: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}; try again shortly (an operator checks the signing key: on AWS the KMS key and kms:GetPublicKey)`,
      {},
      { cause: err },
    );
  }
}
