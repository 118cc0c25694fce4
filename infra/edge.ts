/**
 * The replay URL behind CloudFront and AWS WAF (issue 17.4), a stack option, off by default: a
 * distribution whose one origin is the replay function URL, nothing cached, the bearer token forwarded,
 * and a WAF WebACL with a rate-based rule per client IP. CloudFront adds a secret origin header the
 * function requires, so the function URL cannot be called around WAF. What it costs, how the token travels and what
 * it does not protect: docs/deploy.md "The replay URL behind CloudFront and WAF".
 *
 * A WebACL for CloudFront (scope CLOUDFRONT) exists only in us-east-1. A stack deployed there makes its
 * own (a CloudFormation rule refuses the deploy in any other region, before anything is created);
 * elsewhere, deploy `EdgeWafStack` to us-east-1 first and pass its `WebAclArn` output as `webAclArn`.
 */
import { Aws, CfnOutput, CfnRule, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CacheCookieBehavior,
  CachedMethods,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  Distribution,
  HttpVersion,
  OriginRequestPolicy,
  PriceClass,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { ORIGIN_SECRET_HEADER } from '../functions/config.js';

/** The only region a CLOUDFRONT-scope WebACL can be made in. */
export const WAF_REGION = 'us-east-1';
/**
 * Requests one client IP may make to the replay URL in 5 minutes before WAF blocks it (until its rate
 * falls under): 1 a second on average, far above an auditor's replays and far below a flood.
 */
export const DEFAULT_WAF_RATE_LIMIT = 300;
/**
 * How long CloudFront waits for the replay function's first byte and between bytes: the function merges
 * and lists before it streams; the default quota allows up to 120 s.
 */
export const EDGE_READ_TIMEOUT = Duration.seconds(60);

/** The option of `HansardStackProps.edge`. */
export interface EdgeOptions {
  /**
   * ARN of a CLOUDFRONT-scope WebACL (made in us-east-1, e.g. by `EdgeWafStack`). Absent: the stack makes
   * one, and may then only be deployed in us-east-1.
   */
  webAclArn?: string;
  /** requests per client IP per 5 minutes for the WebACL the stack makes; default `DEFAULT_WAF_RATE_LIMIT` */
  wafRateLimit?: number;
  /**
   * A label of the origin secret's current value (`hansard:edgeSecretVersion`; default `1`). CloudFormation
   * resolves the secret only when a resource that names it is updated: changing this label updates both
   * the distribution (its comment) and the replay function (its `EDGE_ORIGIN_SECRET_VERSION`) in one
   * deploy, so both take a value put into the secret since (docs/deploy.md, rotating the origin secret).
   */
  originSecretVersion?: string;
}

/** A CLOUDFRONT-scope WebACL: allow by default, one rate-based rule blocking an IP over `rateLimit`/5 min. */
export function replayWebAcl(scope: Construct, id: string, rateLimit = DEFAULT_WAF_RATE_LIMIT): CfnWebACL {
  if (!Number.isInteger(rateLimit) || rateLimit < 10 || rateLimit > 2_000_000_000) {
    // WAF's bounds for a rate-based rule's limit (RateBasedStatement.Limit).
    throw new Error(`the WAF rate limit must be a whole number from 10 to 2,000,000,000, not ${rateLimit}`);
  }
  const visibility = (metricName: string) => ({
    cloudWatchMetricsEnabled: true,
    metricName,
    sampledRequestsEnabled: true,
  });
  return new CfnWebACL(scope, id, {
    scope: 'CLOUDFRONT',
    description: 'hansard: rate limit per client IP in front of the replay function URL',
    defaultAction: { allow: {} },
    visibilityConfig: visibility('HansardReplayEdge'),
    rules: [
      {
        name: 'RatePerIp',
        priority: 0,
        action: { block: {} },
        statement: {
          rateBasedStatement: { limit: rateLimit, aggregateKeyType: 'IP', evaluationWindowSec: 300 },
        },
        visibilityConfig: visibility('HansardReplayRatePerIp'),
      },
    ],
  });
}

export interface ReplayEdgeProps extends EdgeOptions {
  /** the replay function's URL (auth type NONE: the function checks the bearer token itself) */
  url: IFunctionUrl;
  /**
   * the value CloudFront sends as `x-hansard-origin-secret` (ORIGIN_SECRET_HEADER) with each request it
   * forwards; the function refuses requests without it (lib/http/origin-secret.ts). A token, e.g. a
   * Secrets Manager dynamic reference: it must not be written into the template in clear
   */
  originSecret: string;
}

/**
 * CloudFront in front of the replay function URL. The bearer token must reach the function, and
 * CloudFront forwards `Authorization` only as part of a cache key (an origin request policy may not
 * name it), so the cache policy keys on it (with the query string) while caching nothing the function
 * does not ask to be cached (default TTL 0; max 1 s, the least that lets a policy have a key); every
 * other viewer header but Host goes to the origin (`ALL_VIEWER_EXCEPT_HOST_HEADER`: a function URL is
 * addressed by its own host). GET and HEAD only, as the function serves.
 */
export class ReplayEdge extends Construct {
  readonly distribution: Distribution;
  /** the WebACL the construct made, when it was not given one */
  readonly webAcl: CfnWebACL | undefined;

  constructor(scope: Construct, id: string, props: ReplayEdgeProps) {
    super(scope, id);
    let webAclArn = props.webAclArn;
    if (webAclArn === undefined) {
      this.webAcl = replayWebAcl(this, 'WebAcl', props.wafRateLimit);
      webAclArn = this.webAcl.attrArn;
      // Fails the deploy before any resource is made, with the reason, rather than WAF's error midway.
      new CfnRule(this, 'WebAclRegion', {
        assertions: [
          {
            assert: Fn.conditionEquals(Aws.REGION, WAF_REGION),
            assertDescription: `a CloudFront WebACL can only be made in ${WAF_REGION}: deploy this stack there, or deploy HansardEdgeWaf to ${WAF_REGION} (-c hansard:edgeWafStack=true) and pass its WebAclArn with -c hansard:webAclArn=… (docs/deploy.md)`,
          },
        ],
      });
    }
    const cachePolicy = new CachePolicy(this, 'TokenKeyedNoCache', {
      comment: 'hansard replay: forward the bearer token (cache key), cache nothing by default',
      headerBehavior: CacheHeaderBehavior.allowList('Authorization'),
      queryStringBehavior: CacheQueryStringBehavior.all(),
      cookieBehavior: CacheCookieBehavior.none(),
      minTtl: Duration.seconds(0),
      defaultTtl: Duration.seconds(0),
      maxTtl: Duration.seconds(1),
    });
    this.distribution = new Distribution(this, 'Distribution', {
      // The secret's version in the comment: a new one updates the distribution, which resolves the secret.
      comment: `hansard replay URL behind WAF (origin secret ${props.originSecretVersion ?? '1'})`,
      defaultBehavior: {
        origin: new FunctionUrlOrigin(props.url, {
          readTimeout: EDGE_READ_TIMEOUT,
          customHeaders: { [ORIGIN_SECRET_HEADER]: props.originSecret },
        }),
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachedMethods: CachedMethods.CACHE_GET_HEAD,
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        cachePolicy,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // The bytes as the function streams them (a replay is verified against its digests).
        compress: false,
      },
      webAclId: webAclArn,
      priceClass: PriceClass.PRICE_CLASS_100,
      httpVersion: HttpVersion.HTTP2_AND_3,
    });
  }
}

/** `EdgeWafStack`'s props: its region is always us-east-1. */
export interface EdgeWafStackProps extends Omit<StackProps, 'env'> {
  /** the account; default the CLI's (`CDK_DEFAULT_ACCOUNT`), unresolved offline */
  account?: string;
  wafRateLimit?: number;
}

/**
 * The WebACL alone, in us-east-1, for a `HansardStack` in another region: deploy it first, then the main
 * stack with `webAclArn` set to its `WebAclArn` output.
 */
export class EdgeWafStack extends Stack {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: EdgeWafStackProps = {}) {
    super(scope, id, {
      description: 'hansard: the WAF WebACL in front of the replay URL (CloudFront scope, us-east-1)',
      ...props,
      env: { region: WAF_REGION, ...(props.account ? { account: props.account } : {}) },
    });
    this.webAcl = replayWebAcl(this, 'ReplayWebAcl', props.wafRateLimit);
    new CfnOutput(this, 'WebAclArn', {
      value: this.webAcl.attrArn,
      description: 'pass as -c hansard:webAclArn=… to the main stack',
    });
  }
}
