import type { promises as dnsPromises } from 'node:dns';
import { Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type Resolver = dnsPromises.Resolver;

const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SRV', 'CAA'] as const;
type RecordType = (typeof RECORD_TYPES)[number];

/** What the resolver said for one type; NODATA is the name existing without records of that type. */
const OUTCOMES = ['NOERROR', 'NODATA', 'NXDOMAIN', 'SERVFAIL', 'REFUSED'] as const;
type Outcome = (typeof OUTCOMES)[number];
/** The overall status is the most telling outcome of all types, in this order. */
const SEVERITY: readonly Outcome[] = ['NXDOMAIN', 'SERVFAIL', 'REFUSED', 'NOERROR', 'NODATA'];

/** Answers that are findings about the name, not failures of the call (node:dns / c-ares codes). */
const OUTCOME_OF_CODE: Record<string, Outcome> = { ENOTFOUND: 'NXDOMAIN', ENODATA: 'NODATA', ESERVFAIL: 'SERVFAIL', EREFUSED: 'REFUSED' };

type DnsRecord = DnsLookupOutput['records'][number];

type DnsLookupInput = ToolInput<typeof definition>;

type DnsLookupOutput = ToolOutput<typeof definition>;

/** A host name or SRV owner name: LDH labels (underscores allowed), optional trailing dot. */
const NAME_PATTERN = '^(?=.{1,253}\\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?$';

const definition = defineTool({
  id: 'dns-lookup',
  name: 'DNS Lookup',
  category: 'monitoring',
  description:
    "Resolves A, AAAA, CNAME, MX, TXT, NS, SRV and CAA records of a name, from the service's resolver or a named one (ip:port), with timing and the server asked. NXDOMAIN, SERVFAIL, REFUSED and NODATA are results (per type and overall), not errors; a resolver that does not answer is a retryable error.",
  version: '1.0.0',
  cacheable: true,
  cache_ttl: 60,
  effects: 'read',
  open_world: true,
  timeout: 30,
  rate_limit: 120,
  input: {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 254, pattern: NAME_PATTERN, description: 'The name to resolve (e.g. example.com, _sip._tcp.example.com).' },
      types: {
        type: 'array',
        minItems: 1,
        maxItems: RECORD_TYPES.length,
        items: { type: 'string', enum: [...RECORD_TYPES] },
        default: ['A', 'AAAA'],
        description: `Record types to ask for, each once: ${RECORD_TYPES.join(', ')}.`,
      },
      server: {
        type: 'string',
        maxLength: 64,
        description: "A resolver to ask instead of the service's: an IP address with an optional port (1.1.1.1, 9.9.9.9:53, [2606:4700::1111]:53); checked by the egress policy.",
      },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 10_000, default: 3000, description: 'How long to wait for each answer (the resolver tries twice).' },
    },
    required: ['name'],
  },
  output: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The name asked for.' },
      status: { type: 'string', enum: [...OUTCOMES], description: 'Overall: NXDOMAIN, else SERVFAIL, else REFUSED when any type got it; NOERROR when some type had records; NODATA when the name exists without any of them.' },
      results: {
        type: 'object',
        description: 'Per type asked: NOERROR (records found), NODATA, NXDOMAIN, SERVFAIL or REFUSED.',
        additionalProperties: { type: 'string', enum: [...OUTCOMES] },
      },
      records: {
        type: 'array',
        description:
          'Records found, in the order of `types`: { type, value } plus ttl (A, AAAA), priority (MX, SRV), weight and port (SRV), tag and critical (CAA). value is the address, target name, TXT text (chunks joined) or CAA value.',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: [...RECORD_TYPES] },
            value: { type: 'string' },
            ttl: { type: 'integer' },
            priority: { type: 'integer' },
            weight: { type: 'integer' },
            port: { type: 'integer' },
            tag: { type: 'string' },
            critical: { type: 'integer' },
          },
          required: ['type', 'value'],
        },
      },
      server: { type: 'string', description: 'The resolver asked (ip or ip:port).' },
      duration_ms: { type: 'number', description: 'Time for all answers.' },
    },
    required: ['name', 'status', 'results', 'records', 'server', 'duration_ms'],
  },
  examples: [
    {
      name: 'Mail and policy records of a domain',
      input: { name: 'example.test', types: ['MX', 'TXT', 'CAA'] },
      output: {
        name: 'example.test',
        status: 'NOERROR',
        results: { MX: 'NOERROR', TXT: 'NOERROR', CAA: 'NOERROR' },
        records: [
          { type: 'MX', value: 'mail.example.test', priority: 10 },
          { type: 'TXT', value: 'v=spf1 mx -all' },
          { type: 'CAA', value: 'ca.example.test', tag: 'issue', critical: 0 },
        ],
        server: '127.84.23.9:9053',
        duration_ms: 1.2,
      },
      varies: ['server', 'duration_ms'],
    },
    {
      name: 'An alias and its addresses',
      input: { name: 'www.example.test', types: ['CNAME', 'A', 'AAAA'] },
      output: {
        name: 'www.example.test',
        status: 'NOERROR',
        results: { CNAME: 'NOERROR', A: 'NOERROR', AAAA: 'NOERROR' },
        records: [
          { type: 'CNAME', value: 'web.example.test' },
          { type: 'A', value: '127.0.0.80', ttl: 0 },
          { type: 'AAAA', value: '::1', ttl: 0 },
        ],
        server: '127.84.23.9:9053',
        duration_ms: 0.9,
      },
      varies: ['server', 'duration_ms'],
    },
    {
      name: 'A service record',
      input: { name: '_https._tcp.example.test', types: ['SRV'] },
      output: {
        name: '_https._tcp.example.test',
        status: 'NOERROR',
        results: { SRV: 'NOERROR' },
        records: [{ type: 'SRV', value: 'web.example.test', priority: 10, weight: 5, port: 8443 }],
        server: '127.84.23.9:9053',
        duration_ms: 0.8,
      },
      varies: ['server', 'duration_ms'],
    },
    {
      name: 'A name that does not exist is a result',
      input: { name: 'missing.example.test', types: ['A'] },
      output: { name: 'missing.example.test', status: 'NXDOMAIN', results: { A: 'NXDOMAIN' }, records: [], server: '127.84.23.9:9053', duration_ms: 0.5 },
      varies: ['server', 'duration_ms'],
    },
  ],
});

@Tool(definition)
export class DnsLookupTool implements ToolHandler<typeof definition> {
  async execute(input: DnsLookupInput, ctx: ToolContext<typeof definition>): Promise<DnsLookupOutput> {
    const types = [...new Set(input.types)];
    const resolver = ctx.dns.resolver({ server: input.server, timeoutMs: input.timeout_ms, parameter: 'server' });
    const server = resolver.getServers()[0] ?? 'the system resolver';
    const cancel = () => resolver.cancel();
    ctx.signal.addEventListener('abort', cancel, { once: true });
    const started = performance.now();
    try {
      const answers = await Promise.all(types.map((type) => ask(resolver, input.name, type)));
      ctx.signal.throwIfAborted();
      const failure = answers.find((answer) => answer.error);
      if (failure) throw unanswered(failure.error!, server, ctx.signal);
      const results = Object.fromEntries(types.map((type, i) => [type, answers[i].outcome!]));
      return {
        name: input.name,
        status: SEVERITY.find((outcome) => Object.values(results).includes(outcome))!,
        results,
        records: answers.flatMap((answer) => answer.records),
        server,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      };
    } finally {
      ctx.signal.removeEventListener('abort', cancel);
    }
  }
}

interface Answer {
  outcome?: Outcome;
  records: DnsRecord[];
  error?: NodeJS.ErrnoException;
}

/** One type's answer; DNS-level outcomes are results, transport failures are kept for the caller. */
async function ask(resolver: Resolver, name: string, type: RecordType): Promise<Answer> {
  try {
    const records = await query(resolver, name, type);
    return { outcome: records.length > 0 ? 'NOERROR' : 'NODATA', records };
  } catch (err) {
    const outcome = OUTCOME_OF_CODE[(err as NodeJS.ErrnoException).code ?? ''];
    return outcome ? { outcome, records: [] } : { records: [], error: err as NodeJS.ErrnoException };
  }
}

async function query(resolver: Resolver, name: string, type: RecordType): Promise<DnsRecord[]> {
  switch (type) {
    case 'A':
      return (await resolver.resolve4(name, { ttl: true })).map(({ address, ttl }) => ({ type, value: address, ttl }));
    case 'AAAA':
      return (await resolver.resolve6(name, { ttl: true })).map(({ address, ttl }) => ({ type, value: address, ttl }));
    case 'CNAME':
      return (await resolver.resolveCname(name)).map((value) => ({ type, value }));
    case 'NS':
      return (await resolver.resolveNs(name)).map((value) => ({ type, value }));
    case 'MX':
      return (await resolver.resolveMx(name)).map(({ exchange, priority }) => ({ type, value: exchange, priority }));
    case 'TXT':
      return (await resolver.resolveTxt(name)).map((chunks) => ({ type, value: chunks.join('') }));
    case 'SRV':
      return (await resolver.resolveSrv(name)).map(({ name: target, priority, weight, port }) => ({ type, value: target, priority, weight, port }));
    case 'CAA':
      // c-ares names the value's member after the record's tag (issue, iodef, …).
      return (await resolver.resolveCaa(name)).map(({ critical, ...tagged }) => {
        const [tag, value] = Object.entries(tagged)[0] ?? ['', ''];
        return { type, value: String(value), tag, critical };
      });
  }
}

/** A resolver that could not be asked: the caller's signal, else a retryable upstream failure. */
function unanswered(err: NodeJS.ErrnoException, server: string, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  const timedOut = err.code === 'ETIMEOUT';
  return new ToolError(`The resolver ${server} ${timedOut ? 'did not answer in time' : `could not be asked (${err.code ?? err.message})`}`, {
    retryable: true,
    details: { server, error: err.code },
  });
}
