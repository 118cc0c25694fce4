/**
 * A stand-in for AWS KMS in msw (there is no KMS emulator): answers the AWS JSON 1.1 protocol the SDK
 * speaks (`POST /`, `X-Amz-Target: TrentService.<Op>`) for Sign, GetPublicKey and DescribeKey, with real
 * Ed25519 keys made by node:crypto, so a signature it returns verifies like a KMS key's would.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { KMSClient } from '@aws-sdk/client-kms';
import { HttpResponse, http } from 'msw';
import type { setupServer } from 'msw/node';

export const KMS_URL = 'https://kms.us-east-1.amazonaws.com/';

export interface FakeKms {
  keys: Map<string, { publicKey: KeyObject; privateKey: KeyObject }>;
  /** every request, in order: the operation and its JSON body */
  calls: { op: string; body: Record<string, unknown> }[];
}

/**
 * Installs the handler on `msw` for keys `arns` (each a fresh Ed25519 pair, created 2026-10-01T12:00Z).
 * @param o.denySign Sign answers 400 AccessDeniedException (the function lacks kms:Sign)
 */
export function fakeKms(
  msw: Pick<ReturnType<typeof setupServer>, 'use'>,
  arns: string[],
  o: { denySign?: boolean } = {},
): FakeKms {
  const kms: FakeKms = { keys: new Map(), calls: [] };
  for (const arn of arns) kms.keys.set(arn, generateKeyPairSync('ed25519'));
  const fail = (type: string, message: string) =>
    HttpResponse.json(
      { __type: type, message },
      { status: 400, headers: { 'content-type': 'application/x-amz-json-1.1' } },
    );
  const ok = (body: Parameters<typeof HttpResponse.json>[0]) =>
    HttpResponse.json(body, { headers: { 'content-type': 'application/x-amz-json-1.1' } });
  msw.use(
    http.post(KMS_URL, async ({ request }) => {
      const op = (request.headers.get('x-amz-target') ?? '').replace('TrentService.', '');
      const body = (await request.json()) as Record<string, unknown>;
      kms.calls.push({ op, body });
      const pair = kms.keys.get(String(body.KeyId));
      if (!pair) return fail('NotFoundException', `Key '${String(body.KeyId)}' does not exist`);
      switch (op) {
        case 'Sign': {
          if (o.denySign) {
            return fail(
              'AccessDeniedException',
              `User: arn:aws:sts::111122223333:assumed-role/digester is not authorized to perform: kms:Sign on resource: ${String(body.KeyId)}`,
            );
          }
          if (body.SigningAlgorithm !== 'ED25519_SHA_512' || body.MessageType !== 'RAW') {
            return fail('ValidationException', 'unsupported signing algorithm or message type');
          }
          const message = Buffer.from(String(body.Message), 'base64');
          const signature = sign(null, message, pair.privateKey).toString('base64');
          return ok({ KeyId: body.KeyId, Signature: signature, SigningAlgorithm: 'ED25519_SHA_512' });
        }
        case 'GetPublicKey':
          return ok({
            KeyId: body.KeyId,
            KeySpec: 'ECC_NIST_EDWARDS25519',
            KeyUsage: 'SIGN_VERIFY',
            SigningAlgorithms: ['ED25519_SHA_512', 'ED25519_PH_SHA_512'],
            PublicKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
          });
        case 'DescribeKey':
          return ok({
            KeyMetadata: {
              KeyId: body.KeyId,
              Arn: body.KeyId,
              CreationDate: Date.parse('2026-10-01T12:00:00.000Z') / 1000,
              KeySpec: 'ECC_NIST_EDWARDS25519',
              KeyUsage: 'SIGN_VERIFY',
              Enabled: true,
            },
          });
        default:
          return fail('UnsupportedOperationException', `${op} is not faked`);
      }
    }),
  );
  return kms;
}

/** A KMS client for tests: fixed region and credentials, one attempt, short timeouts. */
export function kmsTestClient(): KMSClient {
  return new KMSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 2000 },
  });
}
