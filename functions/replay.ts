/**
 * Lambda entry of the replay function, behind a function URL in `RESPONSE_STREAM` mode: the merged
 * replay and raw segments of any size (up to Lambda's streamed-response limit) as they are read, without
 * the 6 MB buffered-response cap. Same app, same bearer-token check (a function URL has no authorizer),
 * GET replay routes only (functions/app.ts).
 *
 * Its own module because hono's `streamHandle` reads the Lambda runtime's global `awslambda`, which
 * exists only in Lambda: tests stub it before importing this file
 * (`globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } }`).
 */
import { streamHandle } from 'hono/aws-lambda';
import { createLambdaApp, type HandlerOverrides } from './app.js';
import { createClients } from './clients.js';
import { parseConfig } from './config.js';
import { createLogger } from './logging.js';

/** The streaming handler for an environment (@throws ConfigError naming the bad keys). */
export function createReplayHandler(env: Record<string, string | undefined>, o: HandlerOverrides = {}) {
  const config = parseConfig(env);
  const logger = o.logger ?? createLogger(config);
  const clients = o.clients ?? createClients(config);
  return streamHandle(
    createLambdaApp({ config, clients, logger, serves: 'replay', ...(o.now ? { now: o.now } : {}) }),
  );
}

export const handler = createReplayHandler(process.env);
