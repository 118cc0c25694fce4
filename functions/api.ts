/**
 * Lambda entry of the API, behind the HTTP API (`infra/stack.ts`): every route of the app, buffered
 * responses (API Gateway and Lambda cap a response at 10 MB and 6 MB; larger replays go through the
 * replay function's URL). The environment is parsed here, at cold start, so a bad one fails the init.
 */
import { handle } from 'hono/aws-lambda';
import { createLambdaApp, type HandlerOverrides } from './app.js';
import { createClients } from './clients.js';
import { parseConfig } from './config.js';
import { createLogger } from './logging.js';

/**
 * The API handler for an environment: parses it (@throws ConfigError naming the bad keys), makes the
 * clients unless given, and wraps the app with hono's Lambda adapter (API Gateway v2 events).
 */
export function createApiHandler(env: Record<string, string | undefined>, o: HandlerOverrides = {}) {
  const config = parseConfig(env);
  const logger = o.logger ?? createLogger(config);
  const clients = o.clients ?? createClients(config);
  return handle(
    createLambdaApp({ config, clients, logger, serves: 'all', ...(o.now ? { now: o.now } : {}) }),
  );
}

export const handler = createApiHandler(process.env);
