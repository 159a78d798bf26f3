import { BadRequestException, HttpException, NotFoundException } from '@nestjs/common';
import { AppException, toErrorResponse } from './errors';

describe('toErrorResponse', () => {
  it('renders AppException with the documented retryable defaults', () => {
    expect(toErrorResponse(new AppException('RATE_LIMITED', 'slow down', { retry_after: 7 }))).toEqual({
      status: 429,
      body: { code: 'RATE_LIMITED', message: 'slow down', retryable: true, retry_after: 7 },
      unexpected: false,
    });
    expect(toErrorResponse(new AppException('FORBIDDEN', 'no')).body.retryable).toBe(false);
    expect(toErrorResponse(new AppException('INVALID_REQUEST', 'gone', { status: 410 })).status).toBe(410);
  });

  it('maps framework 4xx errors to our codes and words', () => {
    expect(toErrorResponse(new NotFoundException('Cannot GET /x')).body).toMatchObject({ code: 'NOT_FOUND', message: 'Route not found' });
    expect(toErrorResponse(new HttpException('too big', 413))).toMatchObject({ status: 413, body: { code: 'INVALID_REQUEST', message: expect.stringContaining('1 MiB') } });
    expect(toErrorResponse(new BadRequestException('bad json')).body).toMatchObject({ code: 'INVALID_REQUEST', message: 'bad json' });
    expect(toErrorResponse(Object.assign(new Error('x'), { statusCode: 415 })).status).toBe(415);
  });

  it('hides anything else behind INTERNAL_ERROR and flags it for logging', () => {
    const response = toErrorResponse(new TypeError('secret internals'));
    expect(response).toMatchObject({ status: 500, unexpected: true, body: { code: 'INTERNAL_ERROR', retryable: true } });
    expect(JSON.stringify(response.body)).not.toContain('secret internals');
  });
});
