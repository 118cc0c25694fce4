/**
 * Lambda entry of the replay builder (issue 17.2): the bucket announces each new build marker
 * (`replays/<key>.building`) through EventBridge (infra/replays.ts: an `Object Created` event, its key as
 * written) or an S3 notification (`Records`, keys URL-encoded), and this function merges the
 * replay its job names into `replays/<key>` (`awsReplayBuilder`, lib/deploy/aws.ts), the copy the API
 * hands out as a short-lived URL for a session too large to stream through API Gateway. A failed build
 * throws: Lambda runs the event again (twice), and a request after `BUILD_CLAIM_MS` starts a new one.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { S3Event } from 'aws-lambda';
import { awsReplayBuilder, type ReplayBuildOutcome } from '../lib/deploy/aws.js';
import { REPLAY_BUILD_STATE_METHODS } from './access.js';
import { type AwsClients, createClients } from './clients.js';
import { parseConfig } from './config.js';
import { createLogger } from './logging.js';
import { onlyMethods } from './state-methods.js';

export interface ReplayBuildOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
}

/**
 * The builder's handler for an environment (@throws ConfigError naming the bad keys). It answers what it
 * did with each record's object: `built`, `already_stored` (the marker's build is done), `not_building`
 * (its build failed and is recorded) or `not_a_job` (not a marker, gone, or not its job's own).
 */
export function createReplayBuildHandler(
  env: Record<string, string | undefined>,
  o: ReplayBuildOverrides = {},
): (event: S3Event | EventBridgeObjectCreated) => Promise<ReplayBuildOutcome[]> {
  const config = parseConfig(env);
  const logger = o.logger ?? createLogger(config);
  const build = awsReplayBuilder({
    clients: o.clients ?? createClients(config),
    bucket: config.BUCKET_NAME,
    table: config.TABLE_NAME,
    ...(o.now ? { now: o.now } : {}),
    // Its role allows only what a build calls (functions/access.ts): a new call fails in tests too.
    wrapState: (state) =>
      onlyMethods(state, REPLAY_BUILD_STATE_METHODS, {
        fn: 'replay builder',
        list: 'REPLAY_BUILD_STATE_METHODS',
      }),
  });
  return async (event) => {
    const outcomes: ReplayBuildOutcome[] = [];
    for (const key of markerKeys(event)) {
      const started = Date.now();
      const outcome = await build(key);
      logger.info('replay build', { key, outcome, ms: Date.now() - started });
      outcomes.push(outcome);
    }
    return outcomes;
  };
}

/** What EventBridge hands a target for an S3 object created (the part the builder reads). */
export interface EventBridgeObjectCreated {
  source: 'aws.s3';
  'detail-type': 'Object Created';
  detail: { bucket: { name: string }; object: { key: string } };
}

/** The object keys an event names: EventBridge's as written, an S3 notification's URL-decoded. */
function markerKeys(event: S3Event | EventBridgeObjectCreated): string[] {
  if ('detail' in event) return [event.detail.object.key];
  // S3 writes the key URL-encoded, a space as '+'.
  return (event.Records ?? []).map((r) => decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')));
}

export const handler = createReplayBuildHandler(process.env);
