/** PromQL queries against the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`) through ctx.http. */
import { ToolError, type ToolContext } from '@tos/sdk';

export type ResultType = 'vector' | 'matrix' | 'scalar' | 'string';

/** One point of a query result: the series' labels (with `__name__`) and a value as Prometheus sends it (a string). */
export interface QueryPoint {
  metric: Record<string, string>;
  value: string;
  timestampSeconds: number;
}

export interface QueryAnswer {
  resultType: ResultType;
  points: QueryPoint[];
  warnings: string[];
}

type Pair = [number, string];
interface ApiAnswer {
  status: 'success' | 'error';
  data?: { resultType: ResultType; result: unknown };
  errorType?: string;
  error?: string;
  warnings?: string[];
}

export interface QueryRequest {
  baseUrl: string;
  /** The form fields: query, and time or start/end/step. */
  params: Record<string, string>;
  range: boolean;
  timeoutMs: number;
}

/** Body limit of an answer: max_samples bounds what is returned, not what Prometheus may send. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export async function queryPrometheus(ctx: ToolContext, request: QueryRequest): Promise<QueryAnswer> {
  const endpoint = `${request.baseUrl.replace(/\/+$/, '')}/api/v1/${request.range ? 'query_range' : 'query'}`;
  // POST with a form body, as Prometheus's own UI does: queries longer than a URL allows still fit.
  const response = await ctx.http.request(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(request.params).toString(),
    timeoutMs: request.timeoutMs,
    maxResponseBytes: MAX_ANSWER_BYTES,
    parameter: 'url',
  });
  if (response.truncated) throw new ToolError(`The Prometheus answer is larger than ${MAX_ANSWER_BYTES} bytes`, { suggestion: 'Narrow the query (label matchers, a shorter range or a larger step)' });
  const answer = parseAnswer(response.text());
  if (answer?.status === 'error') throw apiError(answer, response.status);
  if (response.status < 200 || response.status >= 300 || !answer?.data) throw ToolError.fromResponse('prometheus', response);
  return { resultType: answer.data.resultType, points: pointsOf(answer.data.resultType, answer.data.result), warnings: answer.warnings ?? [] };
}

function parseAnswer(body: string): ApiAnswer | undefined {
  try {
    return JSON.parse(body) as ApiAnswer;
  } catch {
    return undefined;
  }
}

/** Prometheus's error types: bad_data is the caller's query, timeouts and unavailability are worth retrying. */
function apiError(answer: ApiAnswer, status: number): ToolError {
  const message = `Prometheus refused the query: ${answer.error ?? answer.errorType}`;
  if (answer.errorType === 'bad_data') {
    // Prometheus names the form field at fault: `invalid parameter "start": cannot parse …`.
    const parameter = /invalid parameter "(query|time|start|end|step)"/.exec(answer.error ?? '')?.[1] ?? 'query';
    return new ToolError(message, { code: 'INVALID_INPUT', details: { parameter, expected: 'a valid PromQL query and range', received: answer.error } });
  }
  const retryable = answer.errorType === 'timeout' || answer.errorType === 'unavailable' || status >= 500;
  return new ToolError(message, { retryable, details: { upstream: { service: 'prometheus', status }, error_type: answer.errorType } });
}

function pointsOf(resultType: ResultType, result: unknown): QueryPoint[] {
  switch (resultType) {
    case 'vector':
      return (result as { metric: Record<string, string>; value: Pair }[]).map(({ metric, value }) => ({ metric, value: value[1], timestampSeconds: value[0] }));
    case 'matrix':
      return (result as { metric: Record<string, string>; values: Pair[] }[]).flatMap(({ metric, values }) => values.map(([t, v]) => ({ metric, value: v, timestampSeconds: t })));
    case 'scalar':
    case 'string': {
      const [t, v] = result as Pair;
      return [{ metric: {}, value: v, timestampSeconds: t }];
    }
  }
}
