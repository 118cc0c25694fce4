/**
 * A KMS key that serves one purpose (issues 28 and 29): symmetric, rotated yearly, retained with the data
 * it seals; its key policy lets the account administer it (named actions, never `kms:*`) and delegates
 * Encrypt and Decrypt to IAM only under the encryption context `purpose: <its purpose>`. The alerts'
 * secrets (infra/alerts.ts) and sign-in's (infra/sign-in.ts) each have one; the roles' grants carry the
 * same condition (`purposeCondition`).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';

/** The IAM condition key that binds a key, and a grant of it, to one purpose. */
export const PURPOSE_CONDITION_KEY = 'kms:EncryptionContext:purpose';

/** What the account may do to administer a purpose key (its key policy): no Encrypt, no Decrypt. */
export const KEY_ADMIN_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListAliases',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
];

/** The condition of every use of a key of `purpose`. */
export function purposeCondition(purpose: string) {
  return { StringEquals: { [PURPOSE_CONDITION_KEY]: purpose } };
}

/**
 * Adds the key `id` for `purpose` to `scope`.
 * @param delegateSid the key policy's statement that delegates its use to IAM (under the purpose)
 */
export function addPurposeKey(
  scope: Construct,
  id: string,
  o: { description: string; purpose: string; delegateSid: string },
): Key {
  return new Key(scope, id, {
    description: o.description,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
    policy: new PolicyDocument({
      statements: [
        new PolicyStatement({
          sid: 'AccountAdministers',
          principals: [new AccountRootPrincipal()],
          actions: KEY_ADMIN_ACTIONS,
          // In a key policy `*` is this key.
          resources: ['*'],
        }),
        new PolicyStatement({
          sid: o.delegateSid,
          principals: [new AccountRootPrincipal()],
          actions: ['kms:Decrypt', 'kms:Encrypt'],
          resources: ['*'],
          conditions: purposeCondition(o.purpose),
        }),
      ],
    }),
  });
}
