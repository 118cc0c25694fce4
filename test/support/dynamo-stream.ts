/**
 * A DynamoDB stream as Lambda sees it, for the tests of stream-fed functions (test/functions/search.test.ts):
 * the records DynamoDB Local's stream holds for a table (DynamoDB Streams' own API, which DynamoDB Local
 * serves on its one endpoint), shaped as Lambda hands them over, and Lambda's event filtering for the
 * operators our filters use, so a test can pass a handler exactly the records its trigger would.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

type Json = Record<string, unknown>;

/** Who calls: DynamoDB Local keeps one database per access key and region (without `-sharedDb`). */
interface Caller {
  endpoint: string;
  accessKeyId: string;
  region: string;
}

/** One call of the DynamoDB Streams API (JSON 1.0) as `caller`; DynamoDB Local checks no signature. */
async function streams(caller: Caller, op: string, body: Json): Promise<Json> {
  const date = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  const res = await fetch(caller.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDBStreams_20120810.${op}`,
      'x-amz-date': date,
      authorization: `AWS4-HMAC-SHA256 Credential=${caller.accessKeyId}/${date.slice(0, 8)}/${caller.region}/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0`,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`DynamoDB Streams ${op}: ${res.status} ${text}`);
  return JSON.parse(text) as Json;
}

/**
 * Every record of `table`'s stream from its start (each shard from TRIM_HORIZON, in order), as Lambda's
 * `DynamoDBRecord`s (with `eventSourceARN`), read with `client`'s credentials and region at `endpoint`.
 */
export async function streamRecords(
  client: DynamoDBClient,
  endpoint: string,
  table: string,
): Promise<Json[]> {
  const caller: Caller = {
    endpoint,
    accessKeyId: (await client.config.credentials()).accessKeyId,
    region: await client.config.region(),
  };
  const described = await client.send(new DescribeTableCommand({ TableName: table }));
  const arn = described.Table?.LatestStreamArn;
  if (!arn) throw new Error(`${table} has no stream`);
  const stream = (await streams(caller, 'DescribeStream', { StreamArn: arn })).StreamDescription as {
    Shards: Array<{ ShardId: string }>;
  };
  const out: Json[] = [];
  for (const { ShardId } of stream.Shards) {
    let iterator = (
      await streams(caller, 'GetShardIterator', {
        StreamArn: arn,
        ShardId,
        ShardIteratorType: 'TRIM_HORIZON',
      })
    ).ShardIterator as string | undefined;
    // An open shard hands out a next iterator for ever: stop at the first empty page.
    while (iterator) {
      const page = await streams(caller, 'GetRecords', { ShardIterator: iterator });
      const records = (page.Records as Json[] | undefined) ?? [];
      out.push(...records.map((r) => ({ ...r, eventSourceARN: arn })));
      if (records.length === 0) break;
      iterator = page.NextShardIterator as string | undefined;
    }
  }
  return out;
}

/**
 * Whether a Lambda event filter pattern matches `record`, by Lambda's rules for the operators our
 * filters use: a list of alternatives (exact values, `{prefix}`, `{exists}`), nested objects; a field the
 * record lacks is absent all the way down (so `{exists: false}` below it matches).
 * @throws Error for an operator it does not know (so a new one is not silently taken as a mismatch)
 */
export function filterMatches(pattern: Json, record: Json | undefined): boolean {
  return Object.entries(pattern).every(([k, p]) => {
    const v = record?.[k];
    if (Array.isArray(p)) {
      return p.some((alt) => {
        if (typeof alt !== 'object' || alt === null) return v === alt;
        const rule = alt as Json;
        if ('prefix' in rule) return typeof v === 'string' && v.startsWith(String(rule.prefix));
        if ('exists' in rule) return (v !== undefined) === rule.exists;
        throw new Error(`an operator this matcher does not know: ${JSON.stringify(rule)}`);
      });
    }
    return filterMatches(p as Json, typeof v === 'object' && v !== null ? (v as Json) : undefined);
  });
}

/**
 * Whether any of a trigger's filters passes `record`: CDK's `FilterCriteria.filter` results (`{pattern}`),
 * a template's `Filters` entries (`{Pattern}`), or patterns as JSON text.
 */
export function passesFilters(filters: Array<Json | string>, record: Json): boolean {
  return filters.some((f) => {
    const text = typeof f === 'string' ? f : (f.pattern ?? f.Pattern);
    if (typeof text !== 'string') throw new Error(`not a filter: ${JSON.stringify(f)}`);
    return filterMatches(JSON.parse(text) as Json, record);
  });
}
