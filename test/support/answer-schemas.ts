/**
 * Every schema of the API's answers, wherever it lives (the verbs' in lib/service/*-schemas.ts, the HTTP
 * layer's own in lib/http/schemas.ts), under the names the OpenAPI document gives them: what
 * test/http/openapi-types.test.ts checks against the types the verbs and routes answer with.
 */

export { StatusView } from '../../lib/contract/status.js';
export { ErrorBody, Health } from '../../lib/http/schemas.js';
export {
  Attribution,
  AttributionList,
  SessionSummary,
  TurnSummary,
  VerifyProblem,
  VerifyReport,
  WriterSummary,
} from '../../lib/service/analysis/schemas.js';
export { Board, BoardSession } from '../../lib/service/board/schemas.js';
export {
  IngestAnswer,
  SessionDetail,
  SessionList,
  SessionView,
  WriterView,
} from '../../lib/service/sessions/schemas.js';
export {
  CreatedTokenView as CreatedToken,
  SessionTokenView as SessionToken,
  TokenList,
  TokenView,
} from '../../lib/service/tokens/schemas.js';
