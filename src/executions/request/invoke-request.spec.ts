import { AppException } from '../../common/errors';
import { thrownBy } from '../../../test/support/thrown';
import { parseInvokeRequest } from './invoke-request';


describe('parseInvokeRequest', () => {
  it('treats a body without an object `inputs` as flat inputs', () => {
    expect(parseInvokeRequest('t', { a: 1, inputs: 'text' }, {})).toEqual({ input: { a: 1, inputs: 'text' }, options: { async: false, cache: true, timeout: undefined }, answering: {} });
    expect(parseInvokeRequest('t', undefined, {}).input).toEqual({});
  });

  it('reads the envelope; body options win over the query', () => {
    const parsed = parseInvokeRequest('t', { tool_id: 't', inputs: { a: 1 }, options: { timeout: 10, async: false, cache: false } }, { async: 'true', timeout: '99' });
    expect(parsed).toEqual({ input: { a: 1 }, options: { async: false, cache: false, timeout: 10 }, answering: {} });
  });

  it('reads the answers to a tool\'s questions from the envelope, and only there', () => {
    const responses = { confirm: { action: 'accept' } };
    expect(parseInvokeRequest('t', { inputs: {}, input_responses: responses, request_state: 'abc.def' }, {}).answering).toEqual({ responses, state: 'abc.def' });
    expect(parseInvokeRequest('t', { input_responses: responses }, {})).toMatchObject({ input: { input_responses: responses }, answering: {} });
    expect(thrownBy(() => parseInvokeRequest('t', { inputs: {}, request_state: 7 }, {}))).toMatchObject({ code: 'INVALID_REQUEST', options: { details: { parameter: 'request_state' } } });
    expect(thrownBy(() => parseInvokeRequest('t', { inputs: {}, request_state: 'x'.repeat(65_537) }, {}))).toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it('takes query options when the body has none', () => {
    expect(parseInvokeRequest('t', { inputs: {} }, { async: '1', timeout: '300' }).options).toEqual({ async: true, cache: true, timeout: 300 });
  });

  it('Cache-Control: no-cache bypasses the cache', () => {
    expect(parseInvokeRequest('t', {}, {}, 'max-age=0, no-cache').options.cache).toBe(false);
    expect(parseInvokeRequest('t', {}, {}, 'no-cache-please').options.cache).toBe(true);
  });

  it.each([
    [[1], {}, 'body'],
    ['text', {}, 'body'],
    [{ tool_id: 'other', inputs: {} }, {}, 'tool_id'],
    [{ inputs: {}, options: [] }, {}, 'options'],
    [{ inputs: {}, options: { async: 'yes' } }, {}, 'options.async'],
    [{ inputs: {}, options: { cache: 1 } }, {}, 'options.cache'],
    [{ inputs: {}, options: { timeout: 301 } }, {}, 'options.timeout'],
    [{ inputs: {}, options: { timeout: 1.5 } }, {}, 'options.timeout'],
    [{}, { timeout: '0' }, 'timeout'],
    [{}, { timeout: '5s' }, 'timeout'],
    [{}, { async: 'maybe' }, 'async'],
  ])('rejects %j with query %j as INVALID_REQUEST on %s', (body, query, parameter) => {
    const error = thrownBy<AppException>(() => parseInvokeRequest('t', body, query));
    expect(error).toBeInstanceOf(AppException);
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.body.details).toMatchObject({ parameter });
  });
});
