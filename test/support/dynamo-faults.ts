/**
 * Faults DynamoDB Local cannot produce (throttling, a follow-up failing for good), injected in a client's
 * middleware at `initialize`, before the SDK's own retries and the store's: the set-up the DynamoDB
 * store and attack suites share (test/store/dynamo/hot-keys, pending-counts; test/attack/
 * dynamo-counts-listing, pending-counts).
 */
import {
  DynamoDBClient,
  type DynamoDBClientConfig,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';

/**
 * A client for `config` whose every request passes through `fault` first (its command name and input,
 * at `initialize`: before the SDK's retries), which may throw for it or wait before it is sent.
 */
export function clientWith(
  config: DynamoDBClientConfig,
  fault: (command: string, input: Record<string, unknown>) => void | Promise<void>,
): DynamoDBClient {
  const client = new DynamoDBClient(config);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      await fault(context.commandName ?? '', args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name: 'fault' },
  );
  return client;
}

/** What DynamoDB answers a throttled request with (injected). */
export const throttled = () =>
  new ProvisionedThroughputExceededException({ message: 'throttled (injected)', $metadata: {} });

/**
 * A string attribute of a request's input as the middleware sees it: at `initialize` the document
 * client's input is not marshalled yet (`'S#…'`); a low-level client's is (`{ S: 'S#…' }`).
 */
export function attrText(v: unknown): string {
  if (typeof v === 'string') return v;
  return (v as { S?: string } | undefined)?.S ?? '';
}

/** A key attribute of a request's input, whether the document client marshalled it yet or not. */
export function keyOf(input: Record<string, unknown>, name: string): string {
  return attrText((input.Key as Record<string, unknown> | undefined)?.[name]);
}
