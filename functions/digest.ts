/**
 * Lambda entry of the digester (issue 15.2): an EventBridge rule invokes it every minute (infra/stack.ts)
 * and it writes a signed digest for each session due one (`writeDueDigests`, lib/service/digests/write.ts), as
 * the loop of `hansard serve` does every 5 s locally. A session that fails (KMS refused, a store fault) is
 * logged and stays due for the next run; the run itself fails only when the due sessions cannot be listed.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { awsDigester, openKmsSigner } from '../lib/deploy/aws-stores.js';
import type { AwsClients } from './clients.js';
import { createClients } from './clients.js';
import { ConfigError, type LambdaConfig, parseConfig } from './config.js';
import { createLogger } from './logging.js';
import { DIGEST_STATE_METHODS, onlyMethods } from './state-methods.js';

/** Sessions one run attests at most: a minute's run stays well inside its timeout; the rest come next run. */
export const DIGESTS_PER_RUN = 500;

export interface DigestHandlerOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
}

/**
 * The digester for an environment: parses it (@throws ConfigError naming the bad keys, or naming
 * SIGNING_KEY_ARN when it is unset: this function exists to sign), makes the clients unless given.
 * The handler answers the run's counts.
 */
export function createDigestHandler(
  env: Record<string, string | undefined>,
  o: DigestHandlerOverrides = {},
): () => Promise<{ due: number; written: number; skipped: number; failed: number }> {
  const config: LambdaConfig = parseConfig(env);
  if (!config.SIGNING_KEY_ARN) {
    throw new ConfigError('invalid Lambda environment: SIGNING_KEY_ARN (required by the digester)', [
      'SIGNING_KEY_ARN',
    ]);
  }
  const logger = o.logger ?? createLogger(config);
  const clients = o.clients ?? createClients(config);
  if (!clients.kms) throw new ConfigError('the digester needs a KMS client', ['SIGNING_KEY_ARN']);
  const run = awsDigester({
    clients,
    bucket: config.BUCKET_NAME,
    table: config.TABLE_NAME,
    signer: openKmsSigner({
      kms: clients.kms,
      keyArn: config.SIGNING_KEY_ARN,
      retired: config.RETIRED_SIGNING_KEYS,
    }),
    audit:
      config.DIGEST_INTERVAL_SECONDS !== undefined
        ? { intervalSeconds: config.DIGEST_INTERVAL_SECONDS }
        : undefined,
    log: (line) => logger.error(line),
    now: o.now,
    // Its role allows only what writeDueDigests calls (functions/access.ts): a new call fails in tests too.
    wrapState: (state) =>
      onlyMethods(state, DIGEST_STATE_METHODS, { fn: 'digest function', list: 'DIGEST_STATE_METHODS' }),
    limit: DIGESTS_PER_RUN,
  });
  return async () => {
    const result = await run();
    logger.info('digests', { ...result });
    return result;
  };
}

export const handler = createDigestHandler(process.env);
