/**
 * Team sign-in on AWS (issue 29): the KMS key that seals the tenants' OIDC client secrets and the board's
 * cookie keys, and the API function's use of it (`SIGN_IN_KMS_KEY_ID`, lib/deploy/aws.ts
 * `awsSignInService`).
 *
 * - **A key of its own**, not the alerts' key with a second purpose. The API function must Decrypt with
 *   it (at every sign-in, and the cookie keys once per container), where the alerts' key gives the API
 *   Encrypt alone; on one key, the alerts' key policy would have to delegate a second purpose, and that
 *   key would then be one whose Decrypt the public-facing function holds. Two keys keep each key policy
 *   to one purpose and leave the alerts' key and grants exactly as they were (test/infra/sign-in-stack.test.ts);
 *   each can be disabled on its own in an incident (disabling this one stops OIDC sign-in and signs
 *   everyone out; alerts go on); and CloudTrail's Decrypt volume of sign-ins is apart from the alerts'.
 *   It costs a key's monthly fee.
 * - **Symmetric, rotated yearly, retained** with the data: deleting it would leave every stored client
 *   secret unreadable (tenants would set them again) and every session cookie void.
 * - **Only under its purpose**: the key policy delegates Encrypt and Decrypt to IAM under the encryption
 *   context `purpose: sign-in-secret` alone, and the API role's grant has the same condition, so neither
 *   the key nor the role serves anything else.
 */
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { SIGN_IN_SECRET_PURPOSE } from '../functions/access.js';
import type { HansardFunction } from './lambda.js';
import { addPurposeKey, KEY_ADMIN_ACTIONS, PURPOSE_CONDITION_KEY, purposeCondition } from './purpose-key.js';

/** The IAM condition key that binds the sign-in key to its one purpose. */
export const SIGN_IN_PURPOSE_CONDITION = PURPOSE_CONDITION_KEY;
/** What the account may do to administer the sign-in key: the alerts' key's list (named, not `kms:*`). */
export const SIGN_IN_KEY_ADMIN_ACTIONS = KEY_ADMIN_ACTIONS;
/** The API role's actions on the key: it seals and opens (lib/deploy/aws-sealer.ts sends both). */
export const SIGN_IN_KEY_USE_ACTIONS = ['kms:Decrypt', 'kms:Encrypt'];

/** Adds the sign-in key to `scope`, and grants `api` its use under the purpose, naming it in its environment. */
export function addSignIn(scope: Construct, o: { api: HansardFunction }): Key {
  const purpose = purposeCondition(SIGN_IN_SECRET_PURPOSE);
  const key = addPurposeKey(scope, 'SignInSecretKey', {
    description:
      "hansard: seals the tenants' OIDC client secrets and the board's cookie keys (encryption context purpose: sign-in-secret)",
    purpose: SIGN_IN_SECRET_PURPOSE,
    delegateSid: 'AccountDelegatesSignInSecretsToIam',
  });
  o.api.addEnvironment('SIGN_IN_KMS_KEY_ID', key.keyArn);
  o.api.addToRolePolicy(
    new PolicyStatement({
      sid: 'SignInSecretsSealAndOpen',
      actions: SIGN_IN_KEY_USE_ACTIONS,
      resources: [key.keyArn],
      conditions: purpose,
    }),
  );
  return key;
}
